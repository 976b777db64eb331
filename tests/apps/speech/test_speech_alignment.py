"""Attention scored against where each digit was spoken (attnkit.apps.speech.alignment): the
frame spans of joined recordings, peaks on hand-made weights, teacher-forced attention equal to
the model's own teacher forcing, and decoding with the digit count given equal to greedy
decoding without EOS."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.apps.speech.alignment import (
    FIRST_TOKEN,
    alignment_accuracy,
    fixed_length_decode,
    forced_attention,
    frame_spans,
    peak_hits,
)
from attnkit.apps.speech.data import BOS, EOS
from attnkit.apps.speech.model import SpeechModel, SpeechModelConfig

SMALL = dict(n_features=6, d_listener=5, pyramid=2, d_embed=4, d_decoder=7, d_attention=6,
             conv_channels=3, conv_width=5, dropout=0.0)  # fmt: skip
V = FIRST_TOKEN + 5


def _model(attention: str = "location") -> SpeechModel:
    torch.manual_seed(0)
    return SpeechModel(SpeechModelConfig(**SMALL, attention=attention), vocab=V).eval()


def _features(*lengths: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.standard_normal((n, 6)).astype(np.float32) for n in lengths]


def test_frame_spans_round_samples_to_centred_frames():
    # 8 kHz, 10 ms hop: frame k is centred on sample 80 k
    assert frame_spans([(0, 4000), (4400, 8039), (8041, 9000)], 80) == [
        (0, 50), (55, 100), (101, 112)
    ]  # fmt: skip


def test_peaks_hit_when_their_annotation_overlaps_the_tokens_frames():
    weights = np.array([[0.7, 0.2, 0.1, 0.0],  # peak annotation 0: frames 0-3
                        [0.1, 0.1, 0.8, 0.0],  # annotation 2: frames 8-11
                        [0.1, 0.6, 0.2, 0.1]])  # fmt: skip
    spans = [(0, 4), (11, 16), (12, 16)]  # the third step's peak (frames 4-7) misses
    assert peak_hits(weights, spans, reduction=4) == [True, True, False]
    assert peak_hits(weights, [(4, 8)], reduction=4) == [False]  # touching is not overlapping
    assert alignment_accuracy([weights, weights[:1]], [spans, [(0, 1)]], 4) == 0.75
    assert np.isnan(alignment_accuracy([], [], 4))


@pytest.mark.parametrize("attention", ["location", "content"])
def test_forced_attention_is_the_models_teacher_forcing(attention):
    model = _model(attention)
    features, tokens = _features(40, 23), [[5, 6, 5], [7]]
    found = forced_attention(model, features, tokens, batch_size=1)
    for f, t, (guess, weights) in zip(features, tokens, found, strict=True):
        src = torch.from_numpy(f)[None]  # (1, T, F)
        mask = model.source_mask(torch.tensor([len(f)]), len(f))
        with torch.no_grad():
            out = model(src, mask, torch.tensor([[BOS, *t]]), need_weights=True)
        assert weights.shape == (len(t) + 1, len(f) // 4)
        np.testing.assert_allclose(weights, out.attention["cross"][0, 0].numpy(), atol=1e-6)
        assert guess.tolist() == out.logits[0].argmax(-1).tolist()
    batched = forced_attention(model, features, tokens)  # padding changes nothing
    for (_, a), (_, b) in zip(found, batched, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_fixed_length_decoding_is_greedy_with_the_specials_barred():
    model = _model()
    features = _features(40, 23, 31)
    found = fixed_length_decode(model, features, [4, 1, 2])
    assert [len(ids) for ids, _ in found] == [4, 1, 2]
    assert all(min(ids) >= FIRST_TOKEN for ids, _ in found)
    for f, (ids, weights) in zip(features, found, strict=True):  # the same, one step at a time
        src = torch.from_numpy(f)[None]
        with torch.no_grad():
            memory = model.encode(src, model.source_mask(torch.tensor([len(f)]), len(f)))
        state, prev, mine = model.init_state(memory), torch.tensor([BOS]), []
        for _ in ids:
            with torch.no_grad():
                step = model.decode_step(memory, state, prev, need_weights=True)
            logits = step.logits.clone()
            logits[:, [0, BOS, EOS, FIRST_TOKEN - 1]] = float("-inf")
            prev, state = logits.argmax(-1), step.state
            mine.append(int(prev))
        assert ids == mine and weights.shape == (len(ids), len(f) // 4)


def test_fixed_length_decoding_writes_digits_where_the_model_would_stop():
    """A model whose every step prefers EOS, then UNK (its output bias), still writes the
    count's worth of real tokens."""
    model = _model()
    with torch.no_grad():
        model.speller.distribution[-1].bias[EOS] += 100.0
        model.speller.distribution[-1].bias[FIRST_TOKEN - 1] += 50.0  # UNK
    found = fixed_length_decode(model, _features(40, 23), [3, 2])
    assert [len(ids) for ids, _ in found] == [3, 2]
    assert all(min(ids) >= FIRST_TOKEN for ids, _ in found)
