"""Joint CTC-attention decoding by rescoring (Watanabe et al. 2017): a labelling's CTC
log-likelihood against brute force over every frame path, and the N-best re-ranked by
lambda log p_ctc + (1 - lambda) log p_att, by hand."""

import itertools
import math

import pytest
import torch

from attnkit.decoding.ctc import ctc_collapse, ctc_log_likelihood, rescore_with_ctc
from attnkit.decoding.hypothesis import Hypothesis


def _path_sum(log_probs: torch.Tensor, label: tuple) -> float:
    """``p(l | x)``: the sum over every frame path that collapses to ``label``."""
    probs = log_probs.exp().tolist()
    return sum(
        math.prod(probs[t][k] for t, k in enumerate(path))
        for path in itertools.product(range(len(probs[0])), repeat=len(probs))
        if tuple(ctc_collapse(path)) == label
    )


@pytest.mark.parametrize("seed", range(3))
def test_log_likelihood_sums_every_path(seed):
    torch.manual_seed(seed)
    log_probs = torch.randn(3, 5, 4, dtype=torch.float64).log_softmax(-1)  # (N, T, V)
    lengths = torch.tensor([5, 4, 5])
    labels = [(1, 2), (3, 3), (2,)]  # (3, 3) needs a blank between the two 3s
    found = ctc_log_likelihood(log_probs, lengths, labels)
    for i, label in enumerate(labels):
        truth = _path_sum(log_probs[i, : int(lengths[i])], label)
        assert math.isclose(found[i].exp().item(), truth, rel_tol=1e-9)


def test_a_labelling_longer_than_its_frames_is_impossible():
    log_probs = torch.randn(1, 3, 4, dtype=torch.float64).log_softmax(-1)
    assert ctc_log_likelihood(log_probs, torch.tensor([3]), [(1, 1, 2)]).item() == -math.inf


def _hyp(tokens, score):
    return Hypothesis(list(tokens), score, score)


def test_rescoring_mixes_the_two_heads():
    torch.manual_seed(0)
    log_probs = torch.randn(1, 6, 4, dtype=torch.float64).log_softmax(-1)
    lengths = torch.tensor([6])
    hyps = [_hyp((1, 2), -1.0), _hyp((1,), -1.5), _hyp((3, 3, 3, 3), -2.0)]
    ctc = ctc_log_likelihood(
        log_probs.expand(3, -1, -1), lengths.expand(3), [h.tokens for h in hyps]
    )
    for weight in (0.0, 0.3, 1.0):
        (ranked,) = rescore_with_ctc([hyps], log_probs, lengths, weight)
        joint = [
            (weight * c if weight else 0.0) + (1 - weight) * h.score
            for c, h in zip(ctc.tolist(), hyps, strict=True)
        ]
        expected = [hyps[j] for j in sorted(range(3), key=lambda j: -joint[j])]
        assert ranked == expected
    assert rescore_with_ctc([hyps], log_probs, lengths, 0.0) == [hyps]  # attention's order
    # four 3s need 7 frames (blanks between them): CTC rules it out at any weight > 0
    assert rescore_with_ctc([hyps], log_probs, lengths, 0.01)[0][-1] is hyps[2]
    with pytest.raises(ValueError, match="CTC weight"):
        rescore_with_ctc([hyps], log_probs, lengths, 1.5)


def test_sentences_are_rescored_each_with_its_own_emissions():
    torch.manual_seed(1)
    log_probs = torch.randn(2, 4, 3, dtype=torch.float64).log_softmax(-1)
    lengths = torch.tensor([4, 2])
    nbest = [[_hyp((1,), -1.0), _hyp((2,), -1.0)], [_hyp((2,), -1.0), _hyp((1,), -1.0)]]
    ranked = rescore_with_ctc(nbest, log_probs, lengths, 1.0)
    for b in range(2):
        ctc = {t: _path_sum(log_probs[b, : int(lengths[b])], (t,)) for t in (1, 2)}
        assert ranked[b][0].tokens == [max(ctc, key=ctc.get)]
    assert rescore_with_ctc([[], []], log_probs, lengths, 0.5) == [[], []]
