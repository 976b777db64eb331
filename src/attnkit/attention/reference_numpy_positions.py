"""Relative position schemes in plain NumPy, one step per function, written to be read.

The readable twin of :mod:`attnkit.attention.relative`, :mod:`~attnkit.attention.position_bias`
and :mod:`~attnkit.attention.rotary`; the tests check that both give the same numbers. Each
scheme changes only step 1 of attention (the score); the mask, the softmax and the weighted sum
are those of :mod:`attnkit.attention.reference_numpy`. Query ``i`` sits at position
``query_start + i`` and key ``j`` at position ``j``, so the offset of key ``j`` from query ``i``
is ``j - (query_start + i)``. Every score is ``q_i . k_j / sqrt(d)`` plus the scheme's term:

- **Shaw** (Shaw et al. 2018): a learned vector ``a^K_ij`` added to the key (eq. (4)) and
  ``a^V_ij`` added to the value (eq. (3)), looked up by the clipped offset (eq. (8)-(9));
- **T5** (Raffel et al. 2020, §2.1): a learned scalar per offset bucket and head;
- **ALiBi** (Press et al. 2022, §3): the fixed bias ``-m_h |j - i|``;
- **RoPE** (Su et al. 2021, eq. (34)): queries and keys rotated to their positions first.

Shapes: Shaw takes one head ``(T, D)``, the others ``(H, T, D)``; all accept leading batch
axes ``(..., T, D)``. The loops over ``i`` and ``j`` are meant for small inputs.
"""

from __future__ import annotations

import math

import numpy as np

from attnkit.attention.reference_numpy import apply_mask
from attnkit.attention.reference_numpy_normalisers import normalise_masked

# ------------------------------------------------ steps 2-4: mask, softmax, weighted sum


def masked_softmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the keys of each row of ``scores (..., Tq, Tk)``: steps 2 and 3 of
    :mod:`attnkit.attention.reference_numpy` (masked keys get ``-inf``, so weight 0; a row whose
    keys are all masked gets zero weights)."""
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    return normalise_masked(apply_mask(scores, mask), mask, "softmax")


def attend_with_bias(q, k, v, bias, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(q k^T / sqrt(d) + bias) v``: the bias is added after the scaling, before
    the mask. ``q (..., Tq, D)``, ``k (..., Tk, D)``, ``v (..., Tk, Dv)``, ``bias`` broadcastable
    to ``(..., Tq, Tk)``. Returns ``(context (..., Tq, Dv), weights (..., Tq, Tk))``."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + bias  # (..., Tq, Tk)
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


# ---------------------------------------------------------------------- Shaw et al. 2018


def clip(x: int, k: int) -> int:
    """``clip(x, k) = max(-k, min(k, x))`` (Shaw et al. 2018, §3.2)."""
    return max(-k, min(k, x))


def shaw_index(query_position: int, key_position: int, k: int) -> int:
    """Row of ``a_ij`` in a table of ``2k + 1`` vectors ``w_-k .. w_k``: ``clip(j - i, k) + k``
    (Shaw et al. §3.2, ``a_ij = w_clip(j - i, k)``); offsets beyond ``k`` share an edge row."""
    return clip(key_position - query_position, k) + k


def clipped_index_matrix(tq: int, tk: int, k: int, query_start: int = 0) -> np.ndarray:
    """``shaw_index`` for every query ``i`` and key ``j``, ``(Tq, Tk)`` integers."""
    index = np.zeros((tq, tk), dtype=int)
    for i in range(tq):
        for j in range(tk):
            index[i, j] = shaw_index(query_start + i, j, k)
    return index


def shaw_attention(
    q, k, v, key_table, value_table=None, mask=None, query_start: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention with relative position representations (Shaw et al. 2018, §3).

    ``e_ij = q_i . (k_j + a^K_ij) / sqrt(d)`` (eq. (4)), ``alpha_ij = softmax_j(e_ij)`` (§2),
    ``z_i = sum_j alpha_ij (v_j + a^V_ij)`` (eq. (3)), with ``a^K_ij = key_table[clip(j - i, k)
    + k]`` and ``a^V_ij`` likewise from ``value_table`` (none: ``a^V = 0``).

    Args:
        q: ``(..., Tq, D)``; k: ``(..., Tk, D)``; v: ``(..., Tk, Dv)``.
        key_table: ``(2k + 1, D)``; value_table: ``(2k + 1, Dv)`` or None.
        mask: bool, broadcastable to ``(..., Tq, Tk)``; True = may attend.
        query_start: position of the first query (the keys sit at ``0 .. Tk - 1``).
    Returns: ``(context (..., Tq, Dv), weights (..., Tq, Tk))``.
    """
    q, k, v, key_table = (np.asarray(a, dtype=float) for a in (q, k, v, key_table))
    value_table = None if value_table is None else np.asarray(value_table, dtype=float)
    tq, tk, scale = q.shape[-2], k.shape[-2], 1.0 / math.sqrt(q.shape[-1])
    k_clip = (len(key_table) - 1) // 2  # Shaw's k: the table holds w_-k .. w_k
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])  # batch (and head) axes
    scores = np.zeros((*lead, tq, tk))
    for i in range(tq):
        for j in range(tk):
            a_key = key_table[shaw_index(query_start + i, j, k_clip)]  # a^K_ij: (D,)
            scores[..., i, j] = np.sum(q[..., i, :] * (k[..., j, :] + a_key), axis=-1) * scale
    weights = masked_softmax(scores, mask)  # (..., Tq, Tk)
    context = np.zeros((*weights.shape[:-1], v.shape[-1]))  # (..., Tq, Dv)
    for i in range(tq):
        for j in range(tk):
            a_value = 0.0  # a^V_ij: (Dv,), or nothing without a value table
            if value_table is not None:
                a_value = value_table[shaw_index(query_start + i, j, k_clip)]
            context[..., i, :] += weights[..., i, j, None] * (v[..., j, :] + a_value)
    return context, weights


# -------------------------------------------------------------------- T5: Raffel et al. 2020


def t5_bucket(
    offset: int, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True
) -> int:
    """The bucket of one offset ``j - i`` (Raffel et al. 2020, §2.1: 32 buckets, up to 128).

    Bidirectional: the lower half of the buckets for keys at or before the query (offset
    ``<= 0``), the upper half for keys after it. Unidirectional (a decoder): keys after the
    query share bucket 0. Within ``n`` buckets, distances ``0 .. n/2 - 1`` get a bucket each;
    a distance ``d >= n/2`` gets ``n/2 + floor(log(d / (n/2)) / log(max_distance / (n/2))
    * (n - n/2))``, so the buckets grow logarithmically, and at most ``n - 1``.
    """
    bucket = 0
    if bidirectional:
        num_buckets = num_buckets // 2  # each direction has half the buckets
        if offset > 0:
            bucket += num_buckets  # the key comes after the query: upper half
        distance = abs(offset)
    else:
        distance = max(-offset, 0)  # keys after the query: distance 0
    exact = num_buckets // 2
    if distance < exact:
        return bucket + distance  # small distances: one bucket each
    log_ratio = math.log(distance / exact) / math.log(max_distance / exact)  # 0 .. 1 up to max
    far = exact + math.floor(log_ratio * (num_buckets - exact))
    return bucket + min(far, num_buckets - 1)  # beyond max_distance: the last bucket


def t5_bias_matrix(table, tq: int, tk: int, query_start=0, max_distance=128, bidirectional=True):
    """``b[h, i, j] = table[bucket(j - i), h]`` ``(H, Tq, Tk)``; ``table`` is ``(buckets, H)``."""
    table = np.asarray(table, dtype=float)
    num_buckets, num_heads = table.shape
    bias = np.zeros((num_heads, tq, tk))
    for i in range(tq):
        for j in range(tk):
            offset = j - (query_start + i)
            bucket = t5_bucket(offset, num_buckets, max_distance, bidirectional)
            bias[:, i, j] = table[bucket]  # one learned scalar per head
    return bias


def t5_attention(
    q, k, v, table, mask=None, max_distance=128, bidirectional=True, query_start=0
) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(q_i . k_j / sqrt(d) + table[bucket(j - i), h])`` for heads ``(..., H, T, D)``
    (Raffel et al. 2020, §2.1). Returns ``(context, weights)``."""
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    tq, tk = q.shape[-2], k.shape[-2]
    bias = t5_bias_matrix(table, tq, tk, query_start, max_distance, bidirectional)  # (H, Tq, Tk)
    return attend_with_bias(q, k, v, bias, mask)


# ---------------------------------------------------------------- ALiBi: Press et al. 2022


def alibi_slopes(num_heads: int) -> list[float]:
    """The slope ``m_h`` of each head (Press et al. 2022, §3).

    For ``n`` heads, ``n`` a power of 2, the geometric sequence that starts at ``2^(-8/n)`` with
    that same ratio: ``2^(-8/n), 2^(-16/n), ..., 2^(-8)`` (8 heads: ``1/2, 1/4, ..., 1/256``).
    Otherwise (the paper's footnote) the slopes of the largest power of 2 below ``n``, then
    every other slope of twice that power, as many as are missing.
    """

    def geometric(n: int) -> list[float]:
        ratio = 2.0 ** (-8.0 / n)
        return [ratio ** (h + 1) for h in range(n)]

    power = 1
    while power * 2 <= num_heads:
        power *= 2  # the largest power of 2 not above num_heads
    slopes = geometric(power)
    missing = num_heads - power
    slopes += geometric(2 * power)[0::2][:missing]  # every other slope of the next power
    return slopes


def alibi_bias_matrix(slopes, tq: int, tk: int, query_start: int = 0) -> np.ndarray:
    """``b[h, i, j] = -m_h |j - i|`` ``(H, Tq, Tk)``: the further the key, the lower its score.
    (The paper's causal decoder sees only ``j <= i``, where this is ``m_h (j - i)``.)"""
    bias = np.zeros((len(slopes), tq, tk))
    for h, m in enumerate(slopes):
        for i in range(tq):
            for j in range(tk):
                bias[h, i, j] = -m * abs(j - (query_start + i))
    return bias


def alibi_attention(
    q, k, v, mask=None, slopes=None, query_start: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(q_i . k_j / sqrt(d) - m_h |j - i|)`` for heads ``(..., H, T, D)`` (Press et
    al. 2022, §3); ``slopes`` default to :func:`alibi_slopes` of ``H``."""
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    slopes = alibi_slopes(q.shape[-3]) if slopes is None else slopes
    bias = alibi_bias_matrix(slopes, q.shape[-2], k.shape[-2], query_start)  # (H, Tq, Tk)
    return attend_with_bias(q, k, v, bias, mask)


# ------------------------------------------------------------------ RoPE: Su et al. 2021


def rope_theta(dim: int, base: float = 10000.0) -> list[float]:
    """``theta_i = base^(-2i / d)`` for the ``d/2`` pairs ``i = 0 .. d/2 - 1`` (Su et al. 2021,
    eq. (15), with the paper's ``i = 1 .. d/2`` counted from 0)."""
    if dim % 2:
        raise ValueError(f"rotary embeddings need an even width, got {dim}")
    return [base ** (-2.0 * i / dim) for i in range(dim // 2)]


def rotation(angle: float) -> np.ndarray:
    """The 2x2 rotation ``[[cos, -sin], [sin, cos]]`` by ``angle`` (one block of eq. (34))."""
    return np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])


def rope_rotate(x, positions, base: float = 10000.0) -> np.ndarray:
    """``R_m x`` (Su et al. 2021, eq. (34)) for ``x (..., T, d)`` at ``positions`` ``(T,)``:
    the pair ``(x_2i, x_2i+1)`` of row ``t`` is turned by the angle ``m theta_i``,
    ``m = positions[t]``."""
    x = np.asarray(x, dtype=float)
    thetas = rope_theta(x.shape[-1], base)
    out = np.zeros_like(x)
    for t, m in enumerate(positions):
        for i, theta in enumerate(thetas):
            pair = x[..., t, 2 * i : 2 * i + 2]  # (..., 2): (x_2i, x_2i+1)
            out[..., t, 2 * i : 2 * i + 2] = pair @ rotation(m * theta).T  # R pair, per row
    return out


def rope_attention(
    q, k, v, mask=None, query_start: int = 0, key_start: int = 0, base: float = 10000.0
) -> tuple[np.ndarray, np.ndarray]:
    """``softmax((R_m q_i) . (R_n k_j) / sqrt(d)) v`` for heads ``(..., H, T, D)`` (Su et al.
    2021, eq. (34)): queries at ``query_start ..``, keys at ``key_start ..``; no bias."""
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    q_rotated = rope_rotate(q, range(query_start, query_start + q.shape[-2]), base)
    k_rotated = rope_rotate(k, range(key_start, key_start + k.shape[-2]), base)
    return attend_with_bias(q_rotated, k_rotated, v, 0.0, mask)
