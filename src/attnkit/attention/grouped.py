"""Keys and values shared by groups of query heads: multi-query and grouped-query attention.

Multi-query attention (Shazeer 2019, "Fast Transformer Decoding: One Write-Head is All You
Need", §3) gives all ``H`` query heads one key head and one value head; grouped-query attention
(Ainslie et al. 2023, "GQA", §2.2) gives each group of ``G = H / H_kv`` consecutive query heads
one: query head ``h`` reads key/value head ``h // G``. The keys and values, and so a decoder's
KV cache, hold ``H_kv`` heads instead of ``H``, which is the point: the cache is ``H / H_kv``
times smaller and each decoding step reads that much less memory.

:func:`~attnkit.attention.attend` takes keys and values of ``H_kv`` heads directly. The fused
kernel reads them shared (``scaled_dot_product_attention(..., enable_gqa=True)``, no copy);
the other paths repeat each key/value head ``G`` times (:func:`repeat_kv_heads`), which is the
definition written out.
"""

from __future__ import annotations

from torch import Tensor


def head_groups(heads: int, kv_heads: int) -> int:
    """``G = heads / kv_heads``, the query heads per key/value head; a clear error when
    ``kv_heads`` does not divide ``heads``."""
    if kv_heads < 1 or heads % kv_heads:
        raise ValueError(
            f"kv_heads={kv_heads} must divide the {heads} query heads (each group of "
            f"heads / kv_heads query heads shares one key/value head); choose kv_heads among "
            f"{[d for d in range(1, heads + 1) if heads % d == 0]}"
        )
    return heads // kv_heads


def repeat_kv_heads(x: Tensor, groups: int) -> Tensor:
    """``(B, H_kv, T, D) -> (B, H_kv * G, T, D)``: head ``h`` of the result is head ``h // G``
    of ``x`` (Ainslie et al. 2023, §2.2); ``x`` itself when ``G == 1``."""
    return x if groups == 1 else x.repeat_interleave(groups, dim=1)  # (B, H, T, D)


def shared_heads(query: Tensor, key: Tensor, value: Tensor, fused: bool) -> tuple[Tensor, Tensor]:
    """Keys and values ``(B, H_kv, Tk, D)`` for queries ``(B, H, Tq, D)``: unchanged when the
    heads match or the ``fused`` kernel reads them shared, otherwise repeated to ``H`` heads.

    A single key/value head (multi-query) broadcasts against the queries' heads as it is.
    """
    heads, kv_heads = query.size(1), key.size(1)
    if value.size(1) != kv_heads:
        raise ValueError(f"key and value have different head counts: {kv_heads} vs {value.size(1)}")
    if kv_heads == heads or (kv_heads == 1 and not fused):
        return key, value
    groups = head_groups(heads, kv_heads)
    if fused:
        return key, value
    return repeat_kv_heads(key, groups), repeat_kv_heads(value, groups)  # (B, H, Tk, D) each
