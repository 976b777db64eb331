"""Batches of examples of similar length, for tasks whose examples are sequences: less
padding, the same examples. A pure function of ``(seed, epoch)``, so a resumed run draws the
same batches."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def length_batches(lengths: Sequence[int], *, seed: int, epoch: int, size: int) -> list[list[int]]:
    """Every index of ``lengths`` once, in batches of ``size`` of similar length: shuffle,
    sort windows of 50 batches by length, cut, shuffle the batches."""
    rng = np.random.default_rng((seed, epoch))
    order = rng.permutation(len(lengths))
    window, batches = 50 * size, []
    for start in range(0, len(order), window):
        chunk = sorted(order[start : start + window].tolist(), key=lambda i: lengths[i])
        batches += [chunk[k : k + size] for k in range(0, len(chunk), size)]
    return [batches[i] for i in rng.permutation(len(batches))]
