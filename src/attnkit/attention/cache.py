"""Key/value caches for step-by-step decoding (Vaswani et al. 2017, §3.2.3: a decoder's
self-attention sees the positions so far, its cross-attention the projected memory).

- **Self-attention** (:meth:`KVCache.append`): a cache decoded step after step is written in
  place into a buffer with room for more positions (grown by doubling when full), not
  concatenated to a new tensor every step; :meth:`KVCache.select_rows` (beam search's
  reordering, every step) copies only the filled positions, into contiguous tensors.
- **Sliding window** (:meth:`KVCache.keep_last`): only the last ``n`` positions, and the
  first ``sinks`` ones, are kept (Beltagy et al. 2020; Jiang et al. 2023's rolling buffer;
  Xiao et al. 2023's attention sinks); the cache counts what it dropped, so positions stay
  absolute (:attr:`KVCache.seen`, :meth:`KVCache.positions`).
- **Cross-attention** (static): the memory projected once. One cache row may serve a group of
  ``G`` consecutive query rows (a sentence's ``G`` beams): :func:`group_rows` folds them into
  ``G * Tq`` queries of that row and :func:`ungroup_rows` splits the result back, so the
  memory is neither copied ``G`` times nor reordered with the beams.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from attnkit.attention.output import AttentionOutput

MIN_CAPACITY = 32  # positions a self-attention buffer starts with; doubled when full


class _Buffer:
    """Keys and values ``(B, H, capacity, Dh)``; ``length`` positions written so far."""

    def __init__(self, key: Tensor, value: Tensor, length: int) -> None:
        self.key, self.value, self.length = key, value, length

    @classmethod
    def empty(cls, like: Tensor, rows: int, capacity: int, dtype: torch.dtype) -> _Buffer:
        _, h, _, dh = like.shape
        shape = (rows, h, capacity, dh)  # (B, H, capacity, Dh)
        return cls(like.new_empty(shape, dtype=dtype), like.new_empty(shape, dtype=dtype), 0)


@dataclass
class KVCache:
    """Projected keys and values of the positions seen so far, ``(B, H, T, Dh)`` each.

    For self-attention in a decoder, each step appends its new key and value (:meth:`append`:
    in place into a buffer once a cache is appended to step after step, ``key`` and ``value``
    then being views of it). For cross-attention the memory is projected once and reused
    (call with ``key=value=None``).

    A static (cross-attention) cache may hold one row per group of ``G`` consecutive query
    rows, ``B`` rows for ``B * G`` queries: the ``G`` beams of a sentence in beam search share
    their sentence's projected memory, which then is neither copied ``G`` times nor reordered
    when the beams are (:meth:`MultiHeadAttention.forward`, ``static_kv``).
    """

    key: Tensor
    value: Tensor
    dropped: int = 0  # positions removed by keep_last, between the sinks and the kept tail
    sinks: int = 0  # the leading positions keep_last keeps (attention sinks) once it dropped any
    _buffer: _Buffer | None = field(default=None, repr=False, compare=False)
    _appended: bool = field(default=False, repr=False, compare=False)  # made by append

    def __len__(self) -> int:
        return self.key.size(-2)

    @property
    def seen(self) -> int:
        """Positions seen so far, kept or dropped: the absolute position of the next one."""
        return len(self) + self.dropped

    def positions(self, device=None) -> Tensor:
        """Absolute positions ``(T,)`` of the cached keys: ``0 .. T - 1`` until
        :meth:`keep_last` drops some, then the sinks' ``0 .. S - 1`` and the kept tail's."""
        index = torch.arange(len(self), device=device)  # (T,)
        return index if not self.dropped else index + self.dropped * (index >= self.sinks)

    def keep_last(self, n: int, sinks: int = 0) -> KVCache:
        """The first ``sinks`` positions and the last ``n``; this cache itself is unchanged.

        The rolling cache of sliding-window attention keeps the last ``W - 1`` positions, all
        the next query may see (Beltagy et al. 2020, §3.1; Jiang et al. 2023, §2, "rolling
        buffer cache"); StreamingLLM keeps the first ``sinks`` too (Xiao et al. 2023, §3.2).
        Positions stay absolute: :attr:`seen` counts the dropped ones. Without sinks the kept
        part is a view; the next :meth:`append` copies it once, as it would anyway.
        """
        if n < 0 or sinks < 0:
            raise ValueError(f"keep_last needs n >= 0 and sinks >= 0, got n={n}, sinks={sinks}")
        if self.dropped and sinks != self.sinks:
            raise ValueError(
                f"this cache already dropped positions after {self.sinks} sinks; keep the same "
                f"sinks={self.sinks} (the positions between the sinks and the tail are gone)"
            )
        t = len(self)
        head = min(sinks, t)
        if t <= head + n:
            return self
        tail = slice(t - n, t)  # the last n positions
        key, value = self.key[:, :, tail], self.value[:, :, tail]  # (B, H, n, Dh) each
        if head:  # (B, H, S + n, Dh) each
            key = torch.cat([self.key[:, :, :head], key], 2)
            value = torch.cat([self.value[:, :, :head], value], 2)
        return KVCache(key, value, self.dropped + t - head - n, sinks)

    def append(self, key: Tensor, value: Tensor) -> KVCache:
        """This cache followed by ``key``/``value`` ``(B, H, T_new, Dh)``; this cache itself is
        unchanged.

        - Written in place when this cache ends its buffer's written part and the buffer has
          room; an older cache appended to again (a second continuation) gets a copy.
        - A cache made by an earlier append (decoding step after step) moves into a buffer
          with room for twice its positions (at least :data:`MIN_CAPACITY`), so later steps
          write in place, and the copies grow by doubling, not every step.
        - Any other cache (new, or just reordered by :meth:`select_rows`, as beam search does
          every step) and any under autograd are concatenated into new contiguous tensors:
          the reorder copies every position anyway, and the attention reads contiguous
          tensors faster than a buffer's strided view.
        """
        t, n = len(self), key.size(-2)
        grad = key.requires_grad or value.requires_grad or self.key.requires_grad
        buf = self._buffer
        if grad or (buf is None and not self._appended):
            cat = KVCache(torch.cat([self.key, key], 2), torch.cat([self.value, value], 2))
            cat.dropped, cat.sinks, cat._appended = self.dropped, self.sinks, True
            return cat  # (B, H, T + T_new, Dh)
        if buf is None or buf.length != t or buf.key.size(2) < t + n:
            capacity = max(MIN_CAPACITY, 2 * (t + n), 0 if buf is None else 2 * buf.key.size(2))
            dtype = torch.promote_types(self.key.dtype, key.dtype)  # as torch.cat would
            buf = _Buffer.empty(self.key, self.key.size(0), capacity, dtype)  # (B, H, cap, Dh)
            buf.key[:, :, :t], buf.value[:, :, :t] = self.key, self.value
        buf.key[:, :, t : t + n], buf.value[:, :, t : t + n] = key, value
        buf.length = t + n
        views = buf.key[:, :, : t + n], buf.value[:, :, : t + n]  # (B, H, T + T_new, Dh)
        return KVCache(*views, self.dropped, self.sinks, buf, True)

    def select_rows(self, index: Tensor) -> KVCache:
        """Batch rows ``index`` (beam search, batch pruning): the filled positions only, into
        new contiguous tensors. (Selecting into a buffer with spare room measured slower:
        PyTorch's ``index_select`` into a strided destination copies each row-and-head
        separately.)"""
        rows = self.key.index_select(0, index), self.value.index_select(0, index)
        return KVCache(*rows, self.dropped, self.sinks)


def cache_groups(rows: int, cache_rows: int) -> int:
    """How many consecutive query rows share one row of a static cache."""
    if rows == cache_rows:
        return 1
    if cache_rows == 0 or rows % cache_rows:
        raise ValueError(
            f"a static cache of {cache_rows} rows cannot serve {rows} query rows; it needs one "
            "row per query row or per group of consecutive query rows (e.g. per sentence)"
        )
    return rows // cache_rows


def group_rows(x: Tensor, groups: int) -> Tensor:
    """``(B * G, H, Tq, ...)`` -> ``(B, H, G * Tq, ...)``: the ``G`` consecutive rows of a group
    become one row's queries, row ``g``'s query ``t`` at ``g * Tq + t``."""
    rows, h, tq, *rest = x.shape
    x = x.view(rows // groups, groups, h, tq, *rest)  # (B, G, H, Tq, ...)
    return x.transpose(1, 2).reshape(rows // groups, h, groups * tq, *rest)  # (B, H, G*Tq, ..)


def ungroup_rows(x: Tensor, groups: int) -> Tensor:
    """The inverse of :func:`group_rows`: ``(B, H, G * Tq, ...)`` -> ``(B * G, H, Tq, ...)``."""
    b, h, gtq, *rest = x.shape
    x = x.view(b, h, groups, gtq // groups, *rest)  # (B, H, G, Tq, ...)
    return x.transpose(1, 2).reshape(b * groups, h, gtq // groups, *rest)  # (B*G, H, Tq, ..)


def group_mask(mask: Tensor | None, rows: int, groups: int, tq: int) -> Tensor | None:
    """A mask broadcastable to ``(B * G, H, Tq, Tk)`` -> one broadcastable to the grouped
    ``(B, H, G * Tq, Tk)``."""
    if mask is None:
        return None
    mask = mask.view((1,) * (4 - mask.dim()) + tuple(mask.shape))  # (1|B*G|B, 1|H, 1|Tq, Tk)
    if mask.size(0) != rows:  # the same for a group's rows (one row per group, or one row)
        return mask if mask.size(2) == 1 else mask.repeat(1, 1, groups, 1)  # (.., G*Tq, Tk)
    return group_rows(mask.expand(-1, -1, tq, -1), groups)  # (B, 1|H, G * Tq, Tk)


def ungroup_output(out: AttentionOutput, groups: int) -> AttentionOutput:
    """Split a grouped attention's context, weights and log-probabilities back into rows."""
    out.context = ungroup_rows(out.context, groups)  # (B * G, H, Tq, Dv)
    for name in ("weights", "scores"):
        value = getattr(out, name)
        if value is not None:
            setattr(out, name, ungroup_rows(value, groups))  # (B * G, H, Tq, Tk)
    if out.log_prob is not None:
        out.log_prob = ungroup_rows(out.log_prob.unsqueeze(-1), groups).squeeze(-1)  # (B*G, H, Tq)
    return out
