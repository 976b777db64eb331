"""The configured scene splits as tensors, and the batches of a training epoch."""

from __future__ import annotations

import numpy as np
import torch

from attnkit.apps.captioning.config import CaptioningConfig
from attnkit.apps.captioning.scenes import PAD, Vocabulary, as_arrays, make_split


def scenes_for(cfg: CaptioningConfig, split: str):
    """The scenes of ``split`` as configured."""
    d = cfg.data
    n = {"train": d.n_train, "valid": d.n_valid, "test": d.n_test}[split]
    return make_split(
        split,
        n,
        d.seed,
        d.canvas,
        noise=d.noise,
        max_objects=d.max_objects,
        min_size=d.min_size,
        max_size=d.max_size,
    )


def tensors(scenes, vocab: Vocabulary) -> tuple[torch.Tensor, torch.Tensor]:
    """Images ``(N, 3, S, S)`` and BOS...EOS token ids padded with PAD ``(N, T+1)``."""
    ids = [vocab.encode(s.caption) for s in scenes]
    tokens = torch.full((len(ids), max(map(len, ids))), PAD, dtype=torch.long)
    for n, row in enumerate(ids):
        tokens[n, : len(row)] = torch.tensor(row)
    return torch.from_numpy(as_arrays(scenes)), tokens


def epoch_batches(
    n_scenes: int, *, seed: int, epoch: int, n_batches: int, batch_size: int
) -> list[list[int]]:
    """``n_batches`` batches of ``batch_size`` scene indices drawn with replacement, a pure
    function of ``(seed, epoch)`` (so a resumed run draws the same ones)."""
    rng = np.random.default_rng((seed, epoch))
    return rng.integers(0, n_scenes, size=(n_batches, batch_size)).tolist()
