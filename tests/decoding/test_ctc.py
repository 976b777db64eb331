"""CTC decoding (Graves et al. 2006): best path on hand-made emissions, lengths, and the prefix
beam search against brute force over every frame path and against torch's CTC loss."""

import itertools
import math

import pytest
import torch

from attnkit.decoding import ctc_collapse, ctc_greedy_decode, ctc_prefix_beam_search

_ = 0  # the blank


def _emissions(paths: list[list[int]], vocab: int = 11, peak: float = 0.9) -> torch.Tensor:
    """Log-probabilities ``(B, T, V)`` whose argmax at frame t is ``paths[b][t]``."""
    rest = (1.0 - peak) / (vocab - 1)
    probs = torch.full((len(paths), len(paths[0]), vocab), rest)
    for b, path in enumerate(paths):
        for t, token in enumerate(path):
            probs[b, t, token] = peak
    return probs.log()


def test_collapse_merges_repeats_then_drops_blanks():
    assert ctc_collapse([7, 7, _, 7]) == [7, 7]  # "7 7" needs a blank between
    assert ctc_collapse([7, 7, 7]) == [7]
    assert ctc_collapse([_, 3, _, _, 3, 3, 5, _]) == [3, 3, 5]
    assert ctc_collapse([_, _]) == [] and ctc_collapse([]) == []
    assert ctc_collapse([2, 2, 0, 1], blank=2) == [0, 1]


def test_best_path_on_hand_made_emissions():
    paths = [
        [_, 7, 7, _, 7, _, 2, 2],  # "7 7 2": the repeated 7 is kept by the blank between
        [7, 7, 7, 7, 2, 2, _, _],  # "7 2": no blank, the 7s merge
        [_, _, _, _, _, _, _, _],  # nothing
        [1, _, 1, _, 1, 10, 10, 1],  # "1 1 1 10 1"
    ]
    decoded = ctc_greedy_decode(_emissions(paths))
    assert decoded == [[7, 7, 2], [7, 2], [], [1, 1, 1, 10, 1]]


def test_lengths_mask_the_padding_frames():
    paths = [[_, 4, _, 4, 9, 9, 9, 9], [3, 3, _, 3, 6, 6, 6, 6]]
    log_probs = _emissions(paths)
    assert ctc_greedy_decode(log_probs, torch.tensor([4, 3])) == [[4, 4], [3]]
    assert ctc_greedy_decode(log_probs, [8, 0]) == [[4, 4, 9], []]
    one = ctc_greedy_decode(log_probs[1:, :4])
    assert one == ctc_greedy_decode(log_probs, [8, 4])[1:]  # batched = alone


def test_bad_inputs_say_what_is_wrong():
    log_probs = _emissions([[_, 1, 2]])
    with pytest.raises(ValueError, match=r"\(B, T, V\)"):
        ctc_greedy_decode(log_probs[0])
    with pytest.raises(ValueError, match="lengths"):
        ctc_greedy_decode(log_probs, [4])
    with pytest.raises(ValueError, match="blank"):
        ctc_greedy_decode(log_probs, blank=11)
    with pytest.raises(ValueError, match="beam"):
        ctc_prefix_beam_search(log_probs, beam=0)


def _brute_force(log_probs: torch.Tensor) -> dict[tuple, float]:
    """``p(l | x)`` of every labelling, summing ``prod_t y^t_{pi_t}`` over every frame path
    (Graves et al. 2006, eqs. (1)-(2)); ``log_probs (T, V)``."""
    probs = log_probs.exp().tolist()
    totals: dict[tuple, float] = {}
    for path in itertools.product(range(len(probs[0])), repeat=len(probs)):
        p = math.prod(probs[t][k] for t, k in enumerate(path))
        label = tuple(ctc_collapse(path))
        totals[label] = totals.get(label, 0.0) + p
    return totals


@pytest.mark.parametrize("seed", range(5))
def test_prefix_beam_search_is_exact_with_a_wide_beam(seed):
    torch.manual_seed(seed)
    log_probs = torch.randn(2, 5, 3, dtype=torch.float64).mul(1.5).log_softmax(-1)  # (B, T, V)
    lengths = [5, 4]
    results = ctc_prefix_beam_search(log_probs, lengths, beam=500)
    for b, n in enumerate(lengths):
        truth = _brute_force(log_probs[b, :n])
        found = {tuple(labels): math.exp(lp) for labels, lp in results[b]}
        assert found.keys() == truth.keys()
        for label, p in truth.items():
            assert math.isclose(found[label], p, rel_tol=1e-9)
        best = max(truth, key=truth.get)
        assert tuple(results[b][0][0]) == best
        # the same probability as torch's CTC loss (which takes (T, B, V))
        if best:
            loss = torch.nn.functional.ctc_loss(
                log_probs[b : b + 1, :n].transpose(0, 1),
                torch.tensor([best]),
                torch.tensor([n]),
                torch.tensor([len(best)]),
                reduction="sum",
            )
            assert math.isclose(-loss.item(), results[b][0][1], rel_tol=1e-9)


def test_prefix_beam_search_finds_the_labelling_best_path_misses():
    """Best path picks "_" at both frames; "1" is likelier over its paths (0.64 > 0.36)."""
    probs = torch.tensor([[[0.6, 0.4], [0.6, 0.4]]], dtype=torch.float64)  # (1, T=2, V=2)
    assert ctc_greedy_decode(probs.log()) == [[]]
    (best, log_p), second = ctc_prefix_beam_search(probs.log(), beam=2)[0]
    assert best == [1] and math.isclose(math.exp(log_p), 0.4 * 0.4 + 2 * 0.6 * 0.4)
    assert second[0] == [] and math.isclose(math.exp(second[1]), 0.36)


def test_narrow_beam_keeps_beam_hypotheses_and_lengths():
    torch.manual_seed(0)
    log_probs = torch.randn(2, 6, 4).log_softmax(-1)
    results = ctc_prefix_beam_search(log_probs, torch.tensor([6, 0]), beam=3)
    assert len(results[0]) <= 3 and results[1] == [([], 0.0)]
    scores = [lp for _, lp in results[0]]
    assert scores == sorted(scores, reverse=True)
