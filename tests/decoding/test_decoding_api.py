"""Helpers and the convenience entry point: length penalty, step limits, decode(), errors."""

from __future__ import annotations

import pytest
import torch
from decoding_helpers import BOS, EOS, MODEL_IDS, make_model, source_batch

from attnkit.decoding import beam_search, decode, greedy_decode, length_penalty, max_lengths

KW = {"bos_id": BOS, "eos_id": EOS}


def test_length_penalty_is_gnmt():
    """lp(Y) = ((5 + |Y|) / 6)^alpha (Wu et al. 2016, eq. (14)): 1 at |Y| = 1 or alpha = 0."""
    assert length_penalty(1, 0.6) == 1.0
    assert length_penalty(17, 0.0) == 1.0
    assert length_penalty(10, 0.6) == pytest.approx((15 / 6) ** 0.6)
    assert length_penalty(torch.tensor([1.0, 7.0]), 1.0).tolist() == [1.0, 2.0]


def test_max_lengths():
    mask = torch.arange(8)[None, :] < torch.tensor([8, 3, 1])[:, None]  # S = 8, 3, 1
    assert max_lengths(mask, None, 1.5, 10).tolist() == [22, 14, 11]
    assert max_lengths(mask, 12, 1.5, 10).tolist() == [12, 12, 11]
    assert max_lengths(mask, None, 0.5, 0).tolist() == [4, 1, 1]  # at least one step
    with pytest.raises(ValueError, match="max_len"):
        max_lengths(mask, 0, 1.5, 10)


@pytest.mark.parametrize("model_id", ["gru-bahdanau", MODEL_IDS[-1]])
def test_max_len_is_respected(model_id):
    model, (src, mask) = make_model(model_id), source_batch()
    for hyp in greedy_decode(model, src, mask, max_len=3, **KW):
        assert hyp.length <= 3 and len(hyp.tokens) <= 3
    for hyps in beam_search(model, src, mask, beam_size=4, n_best=4, max_len=3, **KW):
        assert all(h.length <= 3 for h in hyps)


def test_decode_picks_greedy_or_beam():
    model, (src, mask) = make_model("gru-luong-general"), source_batch()
    assert decode(model, src, mask, **KW) == greedy_decode(model, src, mask, **KW)
    best = [h[0] for h in beam_search(model, src, mask, beam_size=3, length_penalty=1.0, **KW)]
    assert decode(model, src, mask, beam_size=3, length_penalty=1.0, **KW) == best
    with pytest.raises(ValueError, match="beam_size"):
        decode(model, src, mask, beam_size=0, **KW)


def test_n_best_cannot_exceed_beam():
    model, (src, mask) = make_model("gru-none"), source_batch()
    with pytest.raises(ValueError, match="n_best"):
        beam_search(model, src, mask, beam_size=2, n_best=3, **KW)


def test_no_attention_unless_asked():
    model, (src, mask) = make_model("gru-bahdanau"), source_batch()
    assert all(h.attention is None for h in greedy_decode(model, src, mask, **KW))
    assert all(h[0].attention is None for h in beam_search(model, src, mask, beam_size=2, **KW))
    none = make_model("gru-none")
    assert greedy_decode(none, src, mask, need_weights=True, **KW)[0].attention == {}


@pytest.mark.parametrize("model_id", ["lstm-bahdanau", MODEL_IDS[-1]])
def test_float32_beam_one_equals_greedy(model_id):
    """In float32 (the models' default) the two agree up to rounding."""
    model, (src, mask) = make_model(model_id).float(), source_batch()
    greedy = greedy_decode(model, src, mask, **KW)
    for g, (b,) in zip(greedy, beam_search(model, src, mask, beam_size=1, **KW), strict=True):
        assert g.tokens == b.tokens and g.score == pytest.approx(b.score, abs=1e-4)
