"""Reading formulas off images with a trained model: batched greedy or beam search from
:mod:`attnkit.decoding` (beam 1 is greedy), with each token's attention back on the image's
grid."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnkit.apps.im2latex.images import batch, grid_maps
from attnkit.apps.im2latex.model import FormulaReader
from attnkit.apps.im2latex.vocab import BOS, EOS, Vocabulary
from attnkit.decoding.beam import beam_search
from attnkit.decoding.greedy import greedy_decode


@dataclass
class Reading:
    """One decoded formula: its tokens, log-probability, whether it ended with EOS (False:
    cut at ``max_len``) and, when asked, the attention of every output step on the image's
    grid ``(T, r, c)`` (``T = len(tokens) + 1`` with the EOS step, ``len(tokens)`` if cut)."""

    tokens: list[str]
    score: float
    finished: bool = True
    attention: np.ndarray | None = None


@torch.no_grad()
def read_formulas(
    model: FormulaReader,
    vocab: Vocabulary,
    images: Sequence[np.ndarray],
    *,
    beam: int = 1,
    max_len: int = 160,
    attention: bool = False,
    batch_size: int = 32,
    length_penalty: float = 0.0,
) -> list[Reading]:
    """Decode ``images`` (each ``(H, W)``, 1 = ink) in batches of similar size; results in
    input order. ``length_penalty``: the beam's GNMT alpha (unused by greedy decoding)."""
    model.eval()
    order = sorted(range(len(images)), key=lambda i: (images[i].shape[1], images[i].shape[0]))
    out: list[Reading | None] = [None] * len(images)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        chunk_images = [images[i] for i in chunk]
        readings = _read_batch(model, vocab, chunk_images, beam, max_len, attention, length_penalty)
        for i, reading in zip(chunk, readings, strict=True):
            out[i] = reading
    return out  # type: ignore[return-value]


def _read_batch(
    model, vocab, images, beam: int, max_len: int, attention: bool, length_penalty: float
) -> list[Reading]:
    device = next(model.parameters()).device
    src, mask = batch(images, model.stride)  # (B, 1, H, W), (B, L)
    src, mask = src.to(device), mask.to(device)
    limits = {"max_len": max_len, "max_len_ratio": 0.0, "max_len_offset": max_len}
    if beam == 1:
        hyps = greedy_decode(
            model, src, mask, bos_id=BOS, eos_id=EOS, need_weights=attention, **limits
        )
    else:
        found = beam_search(
            model,
            src,
            mask,
            beam_size=beam,
            bos_id=BOS,
            eos_id=EOS,
            length_penalty=length_penalty,
            need_weights=attention,
            **limits,
        )
        hyps = [h[0] for h in found]
    readings = []
    for image, h in zip(images, hyps, strict=True):
        maps = None
        if attention:
            maps = grid_maps(h.attention["cross"][0], *image.shape, model.stride)  # (T, r, c)
        readings.append(Reading(vocab.decode(h.tokens), float(h.score), h.finished, maps))
    return readings
