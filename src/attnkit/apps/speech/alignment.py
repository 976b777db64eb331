"""Where the speller's attention looks on a digit string, scored against where each digit was
spoken, without the decoder's length prior in the way.

A digit string is made by joining recordings (:mod:`attnkit.apps.speech.digits`), so the frames
of each digit are known: gold alignment for free. Two ways to read attention on it:

- **Forced alignment** (:func:`forced_attention`): the true transcript is fed (teacher
  forcing) and the attention of each digit's step is recorded, so where attention looks is
  seen apart from what the decoder would write. :func:`alignment_accuracy` is the share
  of digits whose attention peak lies on an annotation that overlaps that digit's frames.
- **Decoding with the digit count given** (:func:`fixed_length_decode`): greedy decoding in
  which EOS (and every non-digit token) is barred, stopped after the true number of digits. A
  model trained on 1-3 digits learns to stop after three (its EOS prior); with the count given,
  what is left of the error is what attention and the decoder read.

An annotation ``u`` covers frames ``[u * 2^p, (u + 1) * 2^p)``; frame ``k`` is centred on
sample ``k * hop`` (librosa's ``center=True``), so a digit in samples ``[s, e)`` covers frames
``[round(s / hop), round(e / hop))``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from attnkit.apps.speech.data import BOS, EOS, SPECIALS, SpeechSet, Vocabulary
from attnkit.apps.speech.model import SpeechModel
from attnkit.apps.speech.recognise import collate_features

FIRST_TOKEN = len(SPECIALS)  # PAD, BOS, EOS, UNK come first: the first real token's id


def frame_spans(bounds: Sequence[tuple[int, int]], hop: int) -> list[tuple[int, int]]:
    """Each recording's ``[start, end)`` in samples as ``[first, last + 1)`` frames."""
    return [(round(s / hop), round(e / hop)) for s, e in bounds]


def peak_hits(weights: np.ndarray, spans: Sequence[tuple[int, int]], reduction: int) -> list[bool]:
    """For each of the first ``len(spans)`` rows of ``weights`` ``(T_out, T')``: does its peak
    annotation overlap that token's frames ``spans[i]``?"""
    peaks = np.asarray(weights)[: len(spans)].argmax(-1)  # (n,)
    return [
        int(u) * reduction < end and (int(u) + 1) * reduction > start
        for u, (start, end) in zip(peaks, spans, strict=False)
    ]


def alignment_accuracy(
    weights: Sequence[np.ndarray], spans: Sequence[Sequence[tuple[int, int]]], reduction: int
) -> float:
    """The share of tokens, pooled over utterances, whose attention peak falls on their own
    frames (:func:`peak_hits`); NaN without tokens."""
    hits = [h for w, s in zip(weights, spans, strict=True) for h in peak_hits(w, s, reduction)]
    return float(np.mean(hits)) if hits else float("nan")


def _batches(features: Sequence[np.ndarray], size: int):
    order = sorted(range(len(features)), key=lambda i: len(features[i]))
    for start in range(0, len(order), size):
        yield order[start : start + size]


@torch.no_grad()
def forced_attention(
    model: SpeechModel, features: Sequence[np.ndarray], tokens: Sequence[Sequence[int]],
    batch_size: int = 32,
) -> list[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Teacher forcing on the true ``tokens`` (ids without BOS/EOS): per utterance the argmax
    token of every step ``(n + 1,)`` (the last is the EOS step) and the attention ``(n + 1, T')``
    over its real annotations."""
    model.eval()
    out: list = [None] * len(features)
    for chunk in _batches(features, batch_size):
        src, mask = collate_features([features[i] for i in chunk], model.config.pyramid)
        width = max(len(tokens[i]) for i in chunk) + 1
        tgt_in = torch.full((len(chunk), width), EOS, dtype=torch.long)  # (B, n + 1)
        for row, i in enumerate(chunk):
            tgt_in[row, : len(tokens[i]) + 1] = torch.tensor([BOS, *tokens[i]])
        found = model(src, mask, tgt_in, need_weights=True)
        guesses = found.logits.argmax(-1)  # (B, n + 1)
        weights = found.attention["cross"][:, 0]  # (B, 1, n + 1, T') -> (B, n + 1, T')
        for row, i in enumerate(chunk):
            steps, real = len(tokens[i]) + 1, int(mask[row].sum())
            out[i] = (
                guesses[row, :steps].numpy(),
                weights[row, :steps, :real].float().numpy(),
            )
    return out


@torch.no_grad()
def fixed_length_decode(
    model: SpeechModel, features: Sequence[np.ndarray], counts: Sequence[int],
    batch_size: int = 32,
) -> list[tuple[list[int], np.ndarray]]:  # fmt: skip
    """Greedy decoding of exactly ``counts[i]`` tokens, EOS and the other specials barred: per
    utterance the token ids and the attention ``(counts[i], T')``."""
    model.eval()
    out: list = [None] * len(features)
    for chunk in _batches(features, batch_size):
        src, mask = collate_features([features[i] for i in chunk], model.config.pyramid)
        memory = model.encode(src, mask)
        state = model.init_state(memory)
        prev = torch.full((len(chunk),), BOS, dtype=torch.long)  # (B,)
        ids, weights = [], []
        for _ in range(max(counts[i] for i in chunk)):
            step = model.decode_step(memory, state, prev, need_weights=True)
            logits = step.logits.clone()  # (B, V)
            logits[:, :FIRST_TOKEN] = float("-inf")
            prev, state = logits.argmax(-1), step.state
            ids.append(prev)
            weights.append(step.attention["cross"][:, 0])  # (B, 1, T') -> (B, T')
        ids_t, weights_t = torch.stack(ids, 1), torch.stack(weights, 1)  # (B, n), (B, n, T')
        for row, i in enumerate(chunk):
            n, real = counts[i], int(mask[row].sum())
            out[i] = (ids_t[row, :n].tolist(), weights_t[row, :n, :real].float().numpy())
    return out


def digit_string_scores(model: SpeechModel, vocab: Vocabulary, found: SpeechSet) -> dict:
    """For utterances with known digit frames (``found.spans``): the forced alignment's
    accuracy, token accuracy (the argmax of each teacher-forced digit step is right) and
    monotonicity, and with the digit count given, the digit error rate and monotonicity, each
    utterance's fixed-length text included (``fixed_length_predictions``)."""
    from attnkit.metrics.speech import corpus_monotonicity, digit_error_rate

    ids = [vocab.encode(text)[1:-1] for text in found.texts]  # without BOS and EOS
    forced = forced_attention(model, found.features, ids)
    right = [g[: len(t)] == np.asarray(t) for (g, _), t in zip(forced, ids, strict=True)]
    digits_only = [w[: len(t)] for (_, w), t in zip(forced, ids, strict=True)]
    fixed = fixed_length_decode(model, found.features, [len(t) for t in ids])
    texts = [vocab.join(vocab.decode(tokens)) for tokens, _ in fixed]
    reduction = model.reduction
    return {
        "forced": {
            "alignment_accuracy": alignment_accuracy(digits_only, found.spans, reduction),
            "token_accuracy": float(np.concatenate(right).mean()),
            "monotonicity": corpus_monotonicity(digits_only),
        },
        "fixed_length": {
            "der": digit_error_rate(found.texts, texts),
            "alignment_accuracy": alignment_accuracy([w for _, w in fixed], found.spans, reduction),
            "monotonicity": corpus_monotonicity(w for _, w in fixed),
        },
        "fixed_length_predictions": texts,
    }
