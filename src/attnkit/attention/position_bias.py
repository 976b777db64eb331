"""Position as a scalar bias on the scores: T5's learned buckets and ALiBi's fixed slopes.

Both add a term that depends on the offset ``j - i`` alone to every score, before the
softmax, and add nothing to the embeddings::

    e_ij = q_i . k_j / sqrt(d) + b_h(j - i)

- **T5** (Raffel et al. 2020, §2.1): ``b_h = B[bucket(j - i), h]``, one learned scalar per
  bucket and head. Small offsets get a bucket each; larger ones share logarithmically wider
  buckets up to ``max_distance``, beyond which all offsets share the last bucket.
- **ALiBi** (Press, Smith and Lewis 2022, "Train Short, Test Long", §3):
  ``b_h = -m_h |j - i|``, a fixed slope per head from a geometric sequence, no parameters.

Pass the result to :func:`~attnkit.attention.attend` as ``bias``; it is added to the scaled
scores ``q . k / sqrt(d)``. (T5 itself does not scale the scores, folding the scale into the
initialisation, so a pretrained T5 table would not carry over unchanged.)
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from attnkit.attention.functional import attend
from attnkit.attention.output import AttentionOutput
from attnkit.attention.relative import relative_offsets


def t5_buckets(
    offsets: Tensor, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True
) -> Tensor:
    """Bucket ``(..)`` of each offset ``j - i`` (Raffel et al. 2020 §2.1; 32 buckets, 128).

    Bidirectional: half the buckets for keys before the query (``j <= i``), half for keys
    after it. Within a half of ``n`` buckets, distances ``0 .. n/2 - 1`` have a bucket each; a
    distance ``d >= n/2`` gets ``n/2 + floor(log(d / (n/2)) / log(max_distance / (n/2))
    * (n - n/2))``, at most ``n - 1``. Unidirectional (a decoder): keys after the query are
    masked anyway, so they share bucket 0 with the offset 0.
    """
    if num_buckets < 2 or (bidirectional and num_buckets < 4):
        raise ValueError(f"num_buckets must be >= 4 (2 without directions), got {num_buckets}")
    bucket = torch.zeros_like(offsets)
    if bidirectional:
        num_buckets //= 2
        bucket = bucket + (offsets > 0).long() * num_buckets  # keys after the query: upper half
        distance = offsets.abs()
    else:
        distance = (-offsets).clamp(min=0)
    exact = num_buckets // 2
    if max_distance <= exact:
        raise ValueError(f"max_distance must exceed num_buckets/2 = {exact}, got {max_distance}")
    ratio = torch.log(distance.float().clamp(min=1) / exact) / math.log(max_distance / exact)
    far = exact + (ratio * (num_buckets - exact)).long()  # log-spaced buckets
    far = far.clamp(max=num_buckets - 1)
    return bucket + torch.where(distance < exact, distance, far)


def t5_bias(table: Tensor, offsets: Tensor, max_distance: int = 128, bidirectional: bool = True):
    """``B[bucket(j - i), h]`` as ``(1, H, Tq, Tk)``; ``table`` is ``(num_buckets, H)``."""
    buckets = t5_buckets(offsets, table.size(0), max_distance, bidirectional)  # (Tq, Tk)
    return table[buckets].permute(2, 0, 1).unsqueeze(0)  # (Tq, Tk, H) -> (1, H, Tq, Tk)


def alibi_slopes(num_heads: int) -> Tensor:
    """The head slopes ``m_h`` of Press et al. 2022 §3: for ``n`` heads (a power of 2), the
    geometric sequence ``2^(-8/n), 2^(-16/n), .., 2^(-8)`` (8 heads: ``1/2, 1/4, .., 1/256``).
    Otherwise the slopes of the largest power of 2 below ``n``, then every other slope of the
    next power of 2 (the paper's footnote)."""
    if num_heads < 1:
        raise ValueError(f"num_heads must be >= 1, got {num_heads}")

    def geometric(n: int) -> list[float]:
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    power = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = geometric(power)
    if power < num_heads:
        slopes += geometric(2 * power)[0::2][: num_heads - power]
    return torch.tensor(slopes)  # (H,)


def alibi_bias(slopes: Tensor, offsets: Tensor) -> Tensor:
    """``-m_h |j - i|`` as ``(1, H, Tq, Tk)`` (Press et al. 2022, eq. in §3; the paper's
    causal decoder sees only ``j <= i``, where this is ``m_h (j - i)``)."""
    distance = offsets.abs().to(slopes.dtype)  # (Tq, Tk)
    return -(slopes.view(1, -1, 1, 1) * distance)  # (1, H, Tq, Tk)


def attend_t5(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    table: Tensor,
    max_distance: int = 128,
    bidirectional: bool = True,
    query_start: int = 0,
    **options,
) -> AttentionOutput:
    """:func:`attend` with T5's relative bias (Raffel et al. 2020 §2.1); ``table``
    ``(num_buckets, H)``; ``query_start``: position of the first query."""
    offsets = relative_offsets(query.size(-2), key.size(-2), query_start, query.device)
    bias = t5_bias(table, offsets, max_distance, bidirectional)  # (1, H, Tq, Tk)
    return attend(query, key, value, mask, bias=bias, **options)


def attend_alibi(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    slopes: Tensor | None = None,
    query_start: int = 0,
    **options,
) -> AttentionOutput:
    """:func:`attend` with ALiBi (Press et al. 2022); ``slopes`` default to
    :func:`alibi_slopes` of the number of heads ``H`` of ``query (B, H, Tq, D)``."""
    slopes = alibi_slopes(query.size(1)) if slopes is None else slopes
    offsets = relative_offsets(query.size(-2), key.size(-2), query_start, query.device)
    bias = alibi_bias(slopes.to(query.device, query.dtype), offsets)  # (1, H, Tq, Tk)
    return attend(query, key, value, mask, bias=bias, **options)
