"""Greedy and beam search on small random RNN (and Transformer) models: beam 1 = greedy,
batched = one sentence at a time, scores and attention = forced decoding, length limits."""

from __future__ import annotations

import pytest
import torch
from decoding_helpers import BOS, EOS, MODEL_IDS, counting, force_decode, make_model, source_batch

from attnkit.decoding import beam_search, greedy_decode

ATOL = 1e-5
KW = {"bos_id": BOS, "eos_id": EOS}


def assert_same(a, b, atol=ATOL):
    """Same tokens, finished flags and scores (within ``atol``)."""
    assert (a.tokens, a.finished) == (b.tokens, b.finished)
    assert a.score == pytest.approx(b.score, abs=atol)
    assert a.normalised_score == pytest.approx(b.normalised_score, abs=atol)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_beam_size_one_equals_greedy(model_id, alpha):
    model, (src, mask) = make_model(model_id), source_batch()
    greedy = greedy_decode(model, src, mask, length_penalty=alpha, **KW)
    beam = beam_search(model, src, mask, beam_size=1, length_penalty=alpha, **KW)
    assert any(h.tokens for h in greedy)  # not trivial
    for g, (b,) in zip(greedy, beam, strict=True):
        assert_same(g, b)


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_batched_equals_one_at_a_time(model_id):
    model, (src, mask) = make_model(model_id), source_batch()
    greedy = greedy_decode(model, src, mask, **KW)
    beam = beam_search(model, src, mask, beam_size=3, n_best=2, **KW)
    for i in range(src.size(0)):
        one = (src[i : i + 1], mask[i : i + 1])
        assert_same(greedy_decode(model, *one, **KW)[0], greedy[i])
        alone = beam_search(model, *one, beam_size=3, n_best=2, **KW)[0]
        assert len(alone) == len(beam[i]) == 2
        for a, b in zip(alone, beam[i], strict=True):
            assert_same(a, b)


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_scores_and_attention_match_forced_decoding(model_id):
    """Every returned hypothesis (greedy, and all n-best of beam search) has the score and the
    attention that feeding its tokens (+ EOS) to the model one by one gives, on the
    unpadded sentence; attention shapes are (H, |Y|, S_i) and (H, |Y|, |Y|) for self."""
    model, (src, mask) = make_model(model_id), source_batch()
    greedy = greedy_decode(model, src, mask, need_weights=True, **KW)
    beam = beam_search(model, src, mask, beam_size=4, n_best=3, need_weights=True, **KW)
    for i, hyps in enumerate(beam):
        for hyp in [greedy[i], *hyps]:
            score, attention = force_decode(model, src, mask, i, hyp)
            assert hyp.score == pytest.approx(score, abs=ATOL)
            assert hyp.attention.keys() == attention.keys()
            assert bool(attention) == (model_id.split("-", 1)[-1] != "none")
            for name, weights in hyp.attention.items():
                keys = hyp.length if name.endswith("self") else int(mask[i].sum())
                assert weights.shape[1:] == (hyp.length, keys)
                torch.testing.assert_close(weights, attention[name], atol=ATOL, rtol=0)


@pytest.mark.parametrize("model_id", ["gru-bahdanau", "lstm-local-p", MODEL_IDS[-1]])
def test_length_limits(model_id):
    """A model that never says EOS runs exactly to min(max_len, ratio * S + offset)."""
    model, (src, mask) = make_model(model_id, eos_bias=-1e4), source_batch()
    lengths = mask.sum(1).tolist()  # limits: S + 2 (ratio 1, offset 2), then capped at 4
    for max_len, expected in [
        (None, [s + 2 for s in lengths]),
        (4, [min(4, s + 2) for s in lengths]),
    ]:
        kw = {"max_len": max_len, "max_len_ratio": 1.0, "max_len_offset": 2, **KW}
        greedy = greedy_decode(model, src, mask, **kw)
        beam = beam_search(model, src, mask, beam_size=3, n_best=3, **kw)
        for g, hyps, n in zip(greedy, beam, expected, strict=True):
            assert all(len(h.tokens) == n and not h.finished for h in [g, *hyps])


@pytest.mark.parametrize("model_id", ["gru-luong-general", MODEL_IDS[-1]])
def test_n_best_distinct_and_sorted(model_id):
    model, (src, mask) = make_model(model_id, eos_bias=2.0), source_batch()
    for alpha in (0.0, 0.6, 1.0):
        beam = beam_search(model, src, mask, beam_size=5, n_best=5, length_penalty=alpha, **KW)
        for hyps in beam:
            assert len({tuple(h.tokens) for h in hyps}) == len(hyps) == 5
            keys = [(h.finished, h.normalised_score) for h in hyps]
            assert keys == sorted(keys, reverse=True)


@pytest.mark.parametrize("model_id", ["gru-none", "lstm-bahdanau", MODEL_IDS[-1]])
def test_model_that_says_eos_first_gives_empty_outputs(model_id):
    """Greedy and beam both return [] (finished); beam search stops after one step, as the
    stopping rule says: the other beams' scores (about -1e4) cannot catch up."""
    model, (src, mask) = make_model(model_id, eos_bias=1e4), source_batch()
    calls = counting(model)
    for hyp in greedy_decode(model, src, mask, need_weights=True, **KW):
        assert hyp.tokens == [] and hyp.finished and hyp.score == pytest.approx(0.0, abs=1e-4)
    assert calls[0] == 1
    for (hyp,) in beam_search(model, src, mask, beam_size=4, need_weights=True, **KW):
        assert hyp.tokens == [] and hyp.finished
        assert all(w.shape[1] == 1 for w in hyp.attention.values())
    assert calls[0] == 2
