"""Transcribing features with a trained :class:`~attnkit.apps.speech.model.SpeechModel`: batches
of similar length decoded greedily or by beam search from :mod:`attnkit.decoding` (beam 1 is
greedy), the attention of every output step over the listener's annotations recorded; a
CTC-only model (``ctc_weight`` 1) by best-path decoding (Graves et al. 2006, §3.2), which has
no attention; a joint model's beam re-ranked with its CTC head when ``ctc_rescore`` > 0
(:func:`attnkit.decoding.ctc.rescore_with_ctc`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnkit.apps.speech.data import BOS, EOS, Vocabulary
from attnkit.apps.speech.listener import listener_mask
from attnkit.apps.speech.model import SpeechModel
from attnkit.decoding.beam import beam_search
from attnkit.decoding.ctc import ctc_greedy_decode, rescore_with_ctc
from attnkit.decoding.greedy import greedy_decode


@dataclass
class Transcript:
    """One utterance decoded: its tokens, its text, and when asked the attention of every
    output step over the annotations ``(T_out, T')`` (``T_out`` counts the EOS step; one
    annotation covers ``2^p`` frames). CTC-only models have no attention (None)."""

    tokens: list[str]
    text: str
    attention: np.ndarray | None = None


def collate_features(features: Sequence[np.ndarray], pyramid: int):
    """``(src (B, T, F), src_mask (B, T // 2^p))`` of ``features``, padded with zeros, for a
    listener of ``pyramid`` layers."""
    lengths = torch.tensor([len(f) for f in features])
    frames = int(lengths.max())
    src = torch.zeros(len(features), frames, features[0].shape[1])  # (B, T, F)
    for i, f in enumerate(features):
        src[i, : len(f)] = torch.from_numpy(np.asarray(f, dtype=np.float32))
    return src, listener_mask(lengths, frames, pyramid)


@torch.no_grad()
def transcribe_features(
    model: SpeechModel,
    vocab: Vocabulary,
    features: Sequence[np.ndarray],
    *,
    beam: int = 1,
    max_len: int = 200,
    attention: bool = False,
    batch_size: int = 32,
    ctc_rescore: float = 0.0,
) -> list[Transcript]:
    """Decode ``features`` (each ``(frames, F)``) in batches of similar length; results in
    input order. ``ctc_rescore``: the CTC weight of joint decoding (beam > 1, a joint model)."""
    model.eval()
    for f in features:
        if len(f) < model.reduction:
            raise ValueError(
                f"an utterance of {len(f)} frames is shorter than the listener's "
                f"{model.reduction}-frame step"
            )
    order = sorted(range(len(features)), key=lambda i: len(features[i]))
    out: list[Transcript | None] = [None] * len(features)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        found = _batch(
            model, vocab, [features[i] for i in chunk], beam, max_len, attention, ctc_rescore
        )
        for i, transcript in zip(chunk, found, strict=True):
            out[i] = transcript
    return out  # type: ignore[return-value]


def _batch(
    model, vocab, features, beam: int, max_len: int, attention: bool, ctc_rescore: float = 0.0
) -> list[Transcript]:
    device = next(model.parameters()).device
    src, mask = collate_features(features, model.config.pyramid)
    src, mask = src.to(device), mask.to(device)
    if model.speller is None:  # CTC only: best path
        log_probs, lengths = model.ctc_log_probs(model.encode(src, mask))
        paths = ctc_greedy_decode(log_probs, lengths, blank=model.blank)
        return [_transcript(vocab, ids, None) for ids in paths]
    limits = {"max_len": max_len, "max_len_ratio": 0.0, "max_len_offset": max_len}
    if beam == 1:
        hyps = greedy_decode(
            model, src, mask, bos_id=BOS, eos_id=EOS, need_weights=attention, **limits
        )
    else:
        joint = ctc_rescore > 0 and model.ctc is not None
        found = beam_search(
            model, src, mask, beam_size=beam, bos_id=BOS, eos_id=EOS, length_penalty=0.0,
            n_best=beam if joint else 1, need_weights=attention, **limits,
        )  # fmt: skip
        if joint:
            log_probs, lengths = model.ctc_log_probs(model.encode(src, mask))
            found = rescore_with_ctc(found, log_probs, lengths, ctc_rescore, model.blank)
        hyps = [h[0] for h in found]
    return [
        _transcript(vocab, h.tokens, h.attention["cross"][0] if attention else None) for h in hyps
    ]


def _transcript(vocab: Vocabulary, ids, weights) -> Transcript:
    tokens = vocab.decode(list(ids))
    maps = None if weights is None else weights.float().cpu().numpy()  # (T_out, T')
    return Transcript(tokens, vocab.join(tokens), maps)
