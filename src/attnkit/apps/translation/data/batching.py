"""Token-count batching with length bucketing, and padding into tensors.

Training batches hold sentences of similar length, so little of each batch is padding, and are
capped by *tokens*, not sentences, so a batch of short sentences is large and a batch of long
ones small (as in fairseq's ``max_tokens`` and Vaswani et al. 2017, section 5.1: "each training
batch contained a set of sentence pairs containing approximately 25000 source tokens and 25000
target tokens"). The padded size of a batch is ``n * max(S, T)`` with ``S`` the longest source
and ``T`` the longest target *including* its bos/eos, i.e. the widths of the tensors built by
:func:`collate`; it never exceeds ``max_tokens``.

Each epoch, :class:`TokenBatchSampler` shuffles the examples, sorts them (stably) by length,
packs them greedily and shuffles the batch order, all with a generator seeded by
``(seed, epoch)``: a run is repeatable and every example appears exactly once per epoch.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import NamedTuple

import torch
from torch import Tensor

from attnkit.apps.translation.data.tokenise import BOS_ID, EOS_ID, PAD_ID

log = logging.getLogger(__name__)


class Example(NamedTuple):
    """One encoded pair; ``index`` is its position in the original list. ``tgt`` may be None."""

    index: int
    src: Sequence[int]
    tgt: Sequence[int] | None = None


def encode_pairs(tokenizer, pairs: Sequence[tuple[str, str]]) -> list[Example]:
    """Encode (src, tgt) text pairs with a
    :class:`~attnkit.apps.translation.data.tokenise.Tokenizer`."""
    src = tokenizer.encode_src([p[0] for p in pairs])
    tgt = tokenizer.encode_tgt([p[1] for p in pairs])
    return [Example(i, s, t) for i, (s, t) in enumerate(zip(src, tgt, strict=True))]


def encode_sources(tokenizer, texts: Sequence[str]) -> list[Example]:
    """Encode source sentences for translation (no targets)."""
    return [Example(i, s) for i, s in enumerate(tokenizer.encode_src(list(texts)))]


def _width(example: Example) -> tuple[int, int]:
    """Tensor widths this example needs: ``S = len(src)``, ``T = len(tgt) + 1`` (bos or eos)."""
    return max(1, len(example.src)), (0 if example.tgt is None else len(example.tgt) + 1)


def pack(
    examples: Sequence[Example], order: Sequence[int], max_tokens: int, *, alone: bool = False
) -> list[list[int]]:
    """Cut ``order`` (positions in ``examples``) into consecutive batches under ``max_tokens``.

    An example wider than ``max_tokens`` is an error naming it (1-based), or with ``alone``
    (inference) a batch of its own, with a warning."""
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for position in order:
        s, t = _width(examples[position])
        if max(s, t) > max_tokens:
            what = f"{max(s, t)} tokens, more than max_tokens = {max_tokens}"
            number = examples[position].index + 1
            if not alone:
                raise ValueError(
                    f"pair {number} needs {what}; raise max_tokens or drop long pairs (max_len)"
                )
            log.warning("sentence %d has %s: translated in a batch of its own", number, what)
            batches.append([position])
            continue
        need = max(longest, s, t)
        if current and need * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, need = [], max(s, t)
        current.append(position)
        longest = need
    if current:
        batches.append(current)
    return batches


class TokenBatchSampler:
    """Length-bucketed batches of positions into ``examples``, at most ``max_tokens`` each.

    Iterating yields the batches of the current epoch and then advances the epoch; call
    :meth:`set_epoch` to choose one (e.g. when resuming). Usable as a ``batch_sampler`` of a
    :class:`torch.utils.data.DataLoader` over ``examples`` with ``collate_fn=collate``.
    """

    def __init__(
        self, examples: Sequence[Example], max_tokens: int, *, seed: int = 0, shuffle: bool = True
    ):
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        self.examples, self.max_tokens = examples, max_tokens
        self.seed, self.shuffle, self.epoch = seed, shuffle, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def batches(self, epoch: int) -> list[list[int]]:
        """The batches of ``epoch``: a pure function of (examples, max_tokens, seed, epoch)."""
        rng = random.Random(f"attnkit-batches/{self.seed}/{epoch}")
        order = list(range(len(self.examples)))
        if self.shuffle:
            rng.shuffle(order)  # random order among equal lengths ...
        order.sort(key=lambda i: _width(self.examples[i]))  # ... then bucket by length
        batches = pack(self.examples, order, self.max_tokens)
        if self.shuffle:
            rng.shuffle(batches)
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        epoch = self.epoch
        self.epoch += 1
        yield from self.batches(epoch)

    def __len__(self) -> int:
        return len(self.batches(self.epoch))


def sorted_batches(examples: Sequence[Example], max_tokens: int) -> list[list[int]]:
    """Inference batches: longest sources first, no shuffling; a source wider than
    ``max_tokens`` is a batch of its own (warned, not an error). Each :class:`Batch` carries
    ``indices``, so :func:`restore_order` puts the outputs back in input order."""
    order = sorted(range(len(examples)), key=lambda i: -_width(examples[i])[0])
    return pack(examples, order, max_tokens, alone=True)


def restore_order(indices: Sequence[int], outputs: Sequence) -> list:
    """Place ``outputs[k]`` at position ``indices[k]``; every position must be filled once."""
    if sorted(int(i) for i in indices) != list(range(len(indices))):
        raise ValueError("indices must be a permutation of 0..n-1 (every example exactly once)")
    result: list = [None] * len(indices)
    for position, output in zip(indices, outputs, strict=True):
        result[int(position)] = output
    return result


@dataclass
class Batch:
    """Padded tensors of one batch (B sentences, source width S, target width T).

    Attributes:
        src: ``(B, S)`` source ids, padded with pad.
        src_mask: ``(B, S)`` bool, True at real source tokens.
        tgt_in: ``(B, T)`` decoder input, ``bos y_1 .. y_n`` (None without targets).
        tgt_out: ``(B, T)`` decoder output, ``y_1 .. y_n eos`` (None without targets).
        tgt_mask: ``(B, T)`` bool, True where ``tgt_out`` (equally ``tgt_in``) is real.
        indices: ``(B,)`` the examples' ``index`` values (original positions).
    """

    src: Tensor
    src_mask: Tensor
    tgt_in: Tensor | None
    tgt_out: Tensor | None
    tgt_mask: Tensor | None
    indices: Tensor

    def to(self, device: torch.device | str) -> Batch:
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        return Batch(**{k: None if v is None else v.to(device) for k, v in moved.items()})

    @property
    def n_tgt_tokens(self) -> int:
        """Real target tokens (the loss denominator)."""
        return 0 if self.tgt_mask is None else int(self.tgt_mask.sum())


def _pad(rows: Sequence[Sequence[int]], width: int, pad_id: int) -> Tensor:
    out = torch.full((len(rows), width), pad_id, dtype=torch.long)  # (B, width)
    for b, row in enumerate(rows):
        if len(row):
            out[b, : len(row)] = torch.as_tensor(row, dtype=torch.long)
    return out


def collate(
    examples: Sequence[Example], *, pad_id: int = PAD_ID, bos_id: int = BOS_ID, eos_id: int = EOS_ID
) -> Batch:
    """Pad :class:`Example` s into a :class:`Batch` (targets shifted for teacher forcing)."""
    if not examples:
        raise ValueError("collate: empty batch")
    src_rows = [list(e.src) for e in examples]
    s = max(1, max(len(r) for r in src_rows))
    src = _pad(src_rows, s, pad_id)  # (B, S)
    src_lengths = torch.tensor([len(r) for r in src_rows])  # (B,)
    src_mask = torch.arange(s)[None, :] < src_lengths[:, None]  # (B, S)
    indices = torch.tensor([e.index for e in examples], dtype=torch.long)  # (B,)
    if any(e.tgt is None for e in examples):
        return Batch(src, src_mask, None, None, None, indices)
    tgt_in_rows = [[bos_id, *e.tgt] for e in examples]
    tgt_out_rows = [[*e.tgt, eos_id] for e in examples]
    t = max(len(r) for r in tgt_in_rows)
    tgt_lengths = torch.tensor([len(r) for r in tgt_in_rows])  # (B,)
    tgt_mask = torch.arange(t)[None, :] < tgt_lengths[:, None]  # (B, T)
    return Batch(
        src,
        src_mask,
        _pad(tgt_in_rows, t, pad_id),
        _pad(tgt_out_rows, t, pad_id),
        tgt_mask,
        indices,
    )
