"""Position schemes for :class:`~attnkit.attention.MultiHeadAttention`: one small module each.

``positions`` names where a Transformer gets word order from:

==========  ==============================================  ===========================
name        what it does                                    parameters
==========  ==============================================  ===========================
absolute    sinusoids added to the embeddings (Vaswani      none (in the embedding)
            et al. 2017 §3.5); nothing in the attention
shaw        learned vectors per clipped offset in the keys  ``(2k + 1) x d_head``
            (and values), Shaw et al. 2018                  (per layer, shared by heads)
t5          a learned scalar per offset bucket and head,    ``buckets x H`` (one table
            Raffel et al. 2020 §2.1                         shared by a stack's layers)
alibi       ``-m_h |j - i|``, Press et al. 2022             none
rope        queries and keys rotated, Su et al. 2021        none
none        no position information at all                  none
==========  ==============================================  ===========================

A scheme sees the head-split queries and keys and their positions, and contributes in up to
three places: it may :meth:`~PositionScheme.rotate` queries and new keys (RoPE), add a
:meth:`~PositionScheme.bias` to the scores (Shaw's key term, T5, ALiBi) and add a
:meth:`~PositionScheme.value_term` to the context (Shaw's values). Positions are counted from
the first key, so a decoder with ``t`` cached keys places its query at ``t``: cached decoding
equals recomputing the whole prefix.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnkit.attention.position_bias import alibi_bias, alibi_slopes, t5_bias
from attnkit.attention.relative import relative_offsets, shaw_key_bias, shaw_value_term
from attnkit.attention.rotary import apply_rotation, rotation_angles

POSITIONS = ("absolute", "shaw", "t5", "alibi", "rope", "none")
RELATIVE = ("shaw", "t5", "alibi", "rope")


class PositionScheme(nn.Module):
    """The no-op scheme; subclasses override what they change."""

    needs_weights = False  # the value term needs the weights (no fused kernel)

    def rotate(self, x: Tensor, start: int) -> Tensor:
        """Queries or keys ``(B, H, T, Dh)`` at positions ``start ..``; unchanged here."""
        return x

    def bias(self, query: Tensor, num_keys: int, query_start: int) -> Tensor | None:
        """A float bias broadcastable to the scores ``(B, H, Tq, Tk)``, or None."""
        return None

    def value_term(self, weights: Tensor, query_start: int) -> Tensor | None:
        """A term ``(B, H, Tq, Dh)`` added to the context, or None."""
        return None


class ShawPositions(PositionScheme):
    """Shaw et al. 2018: ``w^K`` (and ``w^V`` with ``values``) for offsets ``-k .. k``.

    Self-attention without a cache uses the skewed form (Huang et al. 2018 §3.4.1).
    """

    def __init__(self, head_dim: int, max_distance: int = 16, values: bool = False) -> None:
        super().__init__()
        if max_distance < 1:
            raise ValueError(f"max_distance must be >= 1, got {max_distance}")
        self.max_distance = max_distance
        self.key_table = nn.Parameter(torch.randn(2 * max_distance + 1, head_dim) * head_dim**-0.5)
        self.value_table = None
        if values:
            self.value_table = nn.Parameter(torch.zeros(2 * max_distance + 1, head_dim))
        self.needs_weights = values

    def bias(self, query: Tensor, num_keys: int, query_start: int) -> Tensor:
        table = self.key_table.to(query.dtype)
        return shaw_key_bias(query, table, num_keys, query_start)  # (B, H, Tq, Tk)

    def value_term(self, weights: Tensor, query_start: int) -> Tensor | None:
        if self.value_table is None:
            return None
        tq, tk = weights.shape[-2:]
        offsets = relative_offsets(tq, tk, query_start, weights.device)  # (Tq, Tk)
        return shaw_value_term(weights, self.value_table, offsets)  # (B, H, Tq, Dh)


class T5Positions(PositionScheme):
    """Raffel et al. 2020 §2.1: a scalar per bucket and head (32 buckets up to 128 apart)."""

    def __init__(
        self, num_heads: int, num_buckets: int = 32, max_distance: int = 128, causal: bool = False
    ) -> None:
        super().__init__()
        self.max_distance, self.bidirectional = max_distance, not causal
        self.table = nn.Parameter(torch.randn(num_buckets, num_heads) * 0.1)  # (buckets, H)

    def bias(self, query: Tensor, num_keys: int, query_start: int) -> Tensor:
        offsets = relative_offsets(query.size(-2), num_keys, query_start, query.device)
        bias = t5_bias(self.table, offsets, self.max_distance, self.bidirectional)
        return bias.to(query.dtype)  # (1, H, Tq, Tk)


class AlibiPositions(PositionScheme):
    """Press et al. 2022: ``-m_h |j - i|`` with the fixed slopes of :func:`alibi_slopes`."""

    def __init__(self, num_heads: int) -> None:
        super().__init__()
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)  # (H,)

    def bias(self, query: Tensor, num_keys: int, query_start: int) -> Tensor:
        offsets = relative_offsets(query.size(-2), num_keys, query_start, query.device)
        return alibi_bias(self.slopes.to(query.dtype), offsets)  # (1, H, Tq, Tk)


class RotaryPositions(PositionScheme):
    """Su et al. 2021: rotate queries and keys by ``m theta_i`` (:func:`rotate`). The cosines
    and sines are kept for the positions seen so far (doubled when a longer sequence comes),
    so a decoding step looks its row up instead of computing it again."""

    def __init__(self, base: float = 10000.0) -> None:
        super().__init__()
        self.base = base
        self._table: tuple[Tensor, Tensor] | None = None  # cos, sin: (T_max, d/2) float64

    def _angles(self, end: int, dim: int, device) -> tuple[Tensor, Tensor]:
        table = self._table
        if table is None or table[0].size(0) < end or table[0].size(1) * 2 != dim:
            size = max(end, 2 * table[0].size(0) if table is not None else 64)
            self._table = rotation_angles(torch.arange(size, device=device), dim, self.base)
        if self._table[0].device != device:
            self._table = tuple(t.to(device) for t in self._table)
        return self._table

    def rotate(self, x: Tensor, start: int) -> Tensor:
        cos, sin = self._angles(start + x.size(-2), x.size(-1), x.device)
        rows = slice(start, start + x.size(-2))
        return apply_rotation(x, cos[rows], sin[rows])  # (B, H, T, Dh)


def build_positions(
    kind: str | None,
    num_heads: int,
    head_dim: int,
    *,
    causal: bool = False,
    max_distance: int = 16,
    relative_values: bool = False,
    num_buckets: int = 32,
    bucket_max_distance: int = 128,
) -> PositionScheme | None:
    """The attention-side module of scheme ``kind`` (see :data:`POSITIONS`), or None for the
    schemes that put nothing in the attention (``absolute``, ``none``).

    Args:
        causal: the attention is masked causally (a decoder): T5 then uses one-sided buckets.
        max_distance: Shaw's clipping distance ``k`` (Shaw et al. use 16).
        relative_values: Shaw's ``a^V`` too (eq. (3)); the weights are then always computed.
        num_buckets, bucket_max_distance: T5's buckets (the paper: 32 and 128).
    """
    if kind not in POSITIONS and kind is not None:
        raise ValueError(f"unknown positions {kind!r}; choose one of {POSITIONS}")
    if kind == "shaw":
        return ShawPositions(head_dim, max_distance, relative_values)
    if kind == "t5":
        return T5Positions(num_heads, num_buckets, bucket_max_distance, causal)
    if kind == "alibi":
        return AlibiPositions(num_heads)
    if kind == "rope":
        if head_dim % 2:
            raise ValueError(f"rope needs an even head width d_model / num_heads, got {head_dim}")
        return RotaryPositions()
    return None
