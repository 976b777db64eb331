"""Relative position representations (Shaw et al. 2018) and the Music Transformer's skewing.

Shaw, Uszkoreit and Vaswani 2018, "Self-Attention with Relative Position Representations":
the edge from query position ``i`` to key position ``j`` carries two learned vectors,
``a^K_ij`` and ``a^V_ij``, looked up by the clipped offset (§3.2)::

    a^K_ij = w^K_clip(j - i, k),   clip(x, k) = max(-k, min(k, x))        # 2k + 1 vectors
    e_ij   = x_i W^Q (x_j W^K + a^K_ij)^T / sqrt(d_z)                      # eq. (4)
    z_i    = sum_j alpha_ij (x_j W^V + a^V_ij)                             # eq. (3)

so the score gains the term ``q_i . a^K_ij / sqrt(d_z)`` (:func:`shaw_key_term`, passed to
:func:`~attnkit.attention.attend` as its ``bias``) and the output gains
``sum_j alpha_ij a^V_ij`` (:func:`shaw_value_term`). The tables are shared by the heads
(Shaw et al. §3.3).

The direct form builds ``a^K`` as a ``(Tq, Tk, D)`` tensor, as eq. (4) reads. Huang et al.
2018, "Music Transformer", §3.4.1, compute ``Q E_r^T`` for the ``2L - 1`` offsets once and
"skew" it into place (:func:`skew`): ``O(L D)`` memory instead of ``O(L^2 D)``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from attnkit.attention.functional import attend
from attnkit.attention.output import AttentionOutput


def relative_offsets(tq: int, tk: int, query_start: int = 0, device=None) -> Tensor:
    """Offsets ``j - i`` ``(Tq, Tk)`` of key ``j`` from query ``i``; the queries sit at positions
    ``query_start .. query_start + Tq - 1`` and the keys at ``0 .. Tk - 1`` (so a decoding step
    with ``t`` cached keys has ``query_start = t``)."""
    queries = torch.arange(query_start, query_start + tq, device=device)  # (Tq,)
    keys = torch.arange(tk, device=device)  # (Tk,)
    return keys.unsqueeze(0) - queries.unsqueeze(1)  # (Tq, Tk)


def clipped_index(offsets: Tensor, max_distance: int) -> Tensor:
    """Row of each offset in a table of ``2k + 1`` vectors: ``clip(j - i, k) + k`` (Shaw et al.
    §3.2); offsets beyond ``k = max_distance`` share the edge rows."""
    return offsets.clamp(-max_distance, max_distance) + max_distance


def shaw_key_term(query: Tensor, table: Tensor, offsets: Tensor, scale: float | None = None):
    """``q_i . a^K_ij * scale`` ``(B, H, Tq, Tk)``, the direct form of Shaw et al. eq. (4).

    Args:
        query: ``(B, H, Tq, D)``.
        table: ``(2k + 1, D)`` the vectors ``w^K_-k .. w^K_k``.
        offsets: ``(Tq, Tk)`` from :func:`relative_offsets`.
        scale: ``1 / sqrt(D)`` when None (the score's own scale).
    """
    k = (table.size(0) - 1) // 2
    edges = table[clipped_index(offsets, k)]  # a^K_ij: (Tq, Tk, D)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    return torch.einsum("bhqd,qkd->bhqk", query, edges) * scale  # (B, H, Tq, Tk)


def skew(rel: Tensor) -> Tensor:
    """Huang et al. 2018 §3.4.1: ``(.., L, 2L - 1)`` scores by offset -> ``(.., L, L)`` by key.

    Column ``r`` of ``rel`` holds offset ``r - (L - 1)``; the result's ``[i, j]`` is
    ``rel[i, j - i + L - 1]``. As in the paper, no index tensor is built: pad one column, so
    that each row is 2L long, flatten, and read the rows again with a stride of ``2L - 1``:
    row ``i`` then starts ``i`` places further left, which is the shift by the query's position.
    """
    *lead, length, width = rel.shape
    if width != 2 * length - 1:
        raise ValueError(f"skew needs (.., L, 2L - 1) scores, got {tuple(rel.shape)}")
    padded = torch.nn.functional.pad(rel, (0, 1))  # (.., L, 2L)
    flat = padded.reshape(*lead, 2 * length * length)  # (.., 2L^2)
    start = length - 1
    rows = flat[..., start : start + length * width]  # (.., L (2L - 1))
    return rows.reshape(*lead, length, width)[..., :length]  # (.., L, L)


def shaw_key_term_skewed(query: Tensor, table: Tensor, scale: float | None = None) -> Tensor:
    """:func:`shaw_key_term` for self-attention (``Tq = Tk = L``, no offset) with the skewing
    of Huang et al. 2018 §3.4.1: ``Q E_r^T`` ``(B, H, L, 2L - 1)``, then :func:`skew`. Equal to
    the direct form (tested) in ``O(L D)`` extra memory."""
    length = query.size(-2)
    k = (table.size(0) - 1) // 2
    offsets = torch.arange(-(length - 1), length, device=query.device)  # (2L - 1,)
    e_r = table[clipped_index(offsets, k)]  # E_r: (2L - 1, D)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    return skew(query @ e_r.transpose(0, 1)) * scale  # (B, H, L, L)


def shaw_value_term(weights: Tensor, table: Tensor, offsets: Tensor) -> Tensor:
    """``sum_j alpha_ij a^V_ij`` ``(B, H, Tq, D)``, Shaw et al. eq. (3).

    ``a^V_ij`` takes only ``2k + 1`` values, so the weights are first summed per clipped offset
    ``(B, H, Tq, 2k + 1)`` and then multiplied with the table: no ``(Tq, Tk, D)`` tensor.
    """
    k = (table.size(0) - 1) // 2
    index = clipped_index(offsets, k).expand_as(weights)  # (B, H, Tq, Tk)
    per_offset = weights.new_zeros(*weights.shape[:-1], table.size(0))  # (B, H, Tq, 2k + 1)
    per_offset.scatter_add_(-1, index, weights)
    return per_offset @ table.to(weights.dtype)  # (B, H, Tq, D)


def shaw_key_bias(
    query: Tensor, table: Tensor, num_keys: int, query_start: int = 0, skewed: bool | None = None
) -> Tensor:
    """Shaw's key term ``(B, H, Tq, Tk)`` for queries at ``query_start ..`` and ``num_keys``
    keys: skewed (:func:`shaw_key_term_skewed`) by default whenever that applies (``Tq = Tk``,
    no offset), else the direct form."""
    tq = query.size(-2)
    can_skew = tq == num_keys and query_start == 0
    if skewed and not can_skew:
        raise ValueError(
            f"skewing needs Tq == Tk and query_start 0, got {tq}, {num_keys}, {query_start}"
        )
    if can_skew if skewed is None else skewed:
        return shaw_key_term_skewed(query, table)  # (B, H, L, L)
    offsets = relative_offsets(tq, num_keys, query_start, query.device)  # (Tq, Tk)
    return shaw_key_term(query, table, offsets)


def attend_shaw(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    key_table: Tensor,
    value_table: Tensor | None = None,
    query_start: int = 0,
    skewed: bool | None = None,
    **options,
) -> AttentionOutput:
    """Scaled dot-product attention with relative position representations (Shaw et al. 2018).

    Args:
        query, key, value: ``(B, H, T, D)``.
        mask: bool, True = may attend.
        key_table: ``(2k + 1, D)`` the ``w^K``; ``value_table``: ``(2k + 1, Dv)`` the ``w^V``
            (Shaw et al. found keys alone enough in translation, Table 3).
        query_start: position of the first query (decoding with a cache).
        skewed: use :func:`shaw_key_term_skewed`; by default whenever it applies.
        options: :func:`attend`'s keywords (``dropout``, ``need_weights``, ...).
    """
    term = shaw_key_bias(query, key_table, key.size(-2), query_start, skewed)  # (B, H, Tq, Tk)
    need_weights = options.pop("need_weights", True)
    out = attend(
        query,
        key,
        value,
        mask,
        bias=term,
        need_weights=need_weights or value_table is not None,
        **options,
    )
    if value_table is not None:
        offsets = relative_offsets(query.size(-2), key.size(-2), query_start, query.device)
        out.context = out.context + shaw_value_term(out.weights, value_table, offsets)
        out.weights = out.weights if need_weights else None
    return out
