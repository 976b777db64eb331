"""Batches made ready for the loss, in this process or in DataLoader worker processes.

A task says which examples make a batch (``epoch_batches``, cheap: indices and the random
draws of its augmentation) and may say how to turn one into tensors (``collate``: decode,
pad, warp, render; the default returns the batch as it is). With ``train.workers`` N > 0 the
engine runs ``collate`` in N :class:`torch.utils.data.DataLoader` worker processes while the
model trains on the previous batches, with pinned memory on CUDA (so the copy to the GPU can
overlap), as PyTorch's data loading guide recommends.

``collate`` is a pure function of the batch (every random draw is made in ``epoch_batches``
from the seed and the epoch), so the workers change no number: a run with workers computes
what one without them does, and resume stays bit for bit. Each worker's own generators are
still seeded from (``train.seed``, epoch, first batch, worker id), so a ``collate`` that draws
anyway draws the same on a resumed run.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class _Listed(Dataset):
    """The epoch's raw batches, in order, each item one batch."""

    def __init__(self, batches: Sequence[Any]) -> None:
        self.batches = list(batches)

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, i: int) -> Any:
        return self.batches[i]


def _seeder(seed: int):
    def init(worker_id: int) -> None:
        s = seed + worker_id
        torch.manual_seed(s)
        np.random.seed(s % 2**32)  # noqa: NPY002 (the global state a collate might use)
        random.seed(s)

    return init


def ready_groups(
    task: Any,
    mine: list[list[tuple[Any, float]]],
    *,
    workers: int = 0,
    pin: bool = False,
    seed: int = 0,
) -> Iterator[list[tuple[Any, float]]]:
    """For each update's ``(batch, weight)`` pairs of this process, the same pairs with each
    batch collated (``task.collate``), group by group, in order."""
    if workers <= 0:
        for pairs in mine:
            yield [(task.collate(b), w) for b, w in pairs]
        return
    flat = [b for pairs in mine for b, _ in pairs]
    loader = DataLoader(
        _Listed(flat),
        batch_size=None,  # each item is already a batch
        collate_fn=task.collate,
        num_workers=workers,
        pin_memory=pin,
        worker_init_fn=_seeder(seed),
        prefetch_factor=2,
        # its own generator: the loader's base seed must not be drawn from torch's global
        # one, which dropout draws from in the training process
        generator=torch.Generator().manual_seed(seed),
    )
    made = iter(loader)
    for pairs in mine:
        yield [(next(made), w) for _, w in pairs]
