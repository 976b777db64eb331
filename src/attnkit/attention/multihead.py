"""Multi-head attention (Vaswani et al. 2017, §3.2.2) for self- and cross-attention.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O``, ``head_i = Attention(Q W_i^Q, K W_i^K,
V W_i^V)``. The heads are one projection each, split along the feature axis. With ``kv_heads``
fewer key/value heads serve the query heads (multi-query, Shazeer 2019; grouped-query, Ainslie
et al. 2023: :mod:`.grouped`); with ``window`` a call attends causally within a sliding window
(Beltagy et al. 2020; Jiang et al. 2023) and keeps a rolling cache, optionally with attention
sinks (Xiao et al. 2023).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnkit.attention.cache import (
    KVCache,
    cache_groups,
    group_mask,
    group_rows,
    ungroup_output,
)
from attnkit.attention.functional import AttentionOutput, attend, attend_chunked
from attnkit.attention.grouped import head_groups
from attnkit.attention.masks import causal_mask, combine, sliding_window_mask_at
from attnkit.attention.positions import RotaryPositions, build_positions
from attnkit.attention.scores import build_score


class MultiHeadAttention(nn.Module):
    """Multi-head attention with per-head weights on request and an incremental KV cache.

    Args:
        d_model: width D of queries and of the output.
        num_heads: H; ``d_model`` must be divisible by it (Dh = D / H).
        dropout: dropout on the attention weights during training.
        bias: biases in the four projections.
        kdim, vdim: widths of key and value inputs (cross-attention), default ``d_model``.
        score: ``"scaled_dot"`` (default), ``"dot"``, or a learned score name (``"general"``,
            ``"additive"``), applied per head with parameters shared across heads.
        normaliser: any name accepted by :func:`attend`.
        positions: a relative position scheme for self-attention, ``"shaw"``, ``"t5"``,
            ``"alibi"`` or ``"rope"`` (:mod:`attnkit.attention.positions`); None (default),
            ``"absolute"`` and ``"none"`` put no position term in the attention.
        position_options: keywords of :func:`~attnkit.attention.positions.build_positions`
            (``causal``, ``max_distance``, ``relative_values``, ``num_buckets``, ...).
        kv_heads: key/value heads ``H_kv``, dividing ``num_heads`` (default: ``num_heads``).
            1 is multi-query attention (Shazeer 2019), between 1 and ``num_heads``
            grouped-query attention (Ainslie et al. 2023): query head ``h`` reads key/value
            head ``h // (H / H_kv)``, and keys, values and the KV cache hold ``H_kv`` heads.

    ``forward(query, key, value, mask=None, need_weights=False)`` returns an
    :class:`AttentionOutput` with ``context (B, Tq, D)`` and, when ``need_weights``, per-head
    ``weights (B, H, Tq, Tk)``. Without weights and with dot-product softmax it runs PyTorch's
    fused ``scaled_dot_product_attention``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        *,
        dropout: float = 0.0,
        bias: bool = True,
        kdim: int | None = None,
        vdim: int | None = None,
        score: str = "scaled_dot",
        normaliser: str = "softmax",
        positions: str | None = None,
        position_options: dict | None = None,
        kv_heads: int | None = None,
    ) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}; "
                "choose num_heads that divides d_model"
            )
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.kv_heads = num_heads if kv_heads is None else kv_heads
        head_groups(num_heads, self.kv_heads)  # kv_heads must divide num_heads
        kv_width = self.kv_heads * self.head_dim  # H_kv * Dh
        self.dropout = dropout
        self.normaliser = normaliser
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)  # W^Q for all heads
        self.k_proj = nn.Linear(kdim or d_model, kv_width, bias=bias)  # W^K, H_kv heads
        self.v_proj = nn.Linear(vdim or d_model, kv_width, bias=bias)  # W^V, H_kv heads
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # W^O
        if score in ("dot", "scaled_dot"):
            self.score = score
        elif score == "location":
            raise ValueError(
                "score 'location' depends on the query alone and on a fixed source length; "
                "use LocationAttention for encoder-decoder models, not MultiHeadAttention"
            )
        else:
            self.score = build_score(score, self.head_dim, self.head_dim)
        self.position = build_positions(
            positions, num_heads, self.head_dim, **(position_options or {})
        )

    def _split(self, x: Tensor, heads: int) -> Tensor:
        b, t, _ = x.shape
        x = x.view(b, t, heads, self.head_dim)  # (B, T, H, Dh)
        return x.transpose(1, 2)  # (B, H, T, Dh)

    def project_kv(self, key: Tensor, value: Tensor, start: int = 0) -> KVCache:
        """Project a memory once into per-head keys and values ``(B, H_kv, Tk, Dh)``: the
        static cache of cross-attention (pass it back with ``static_kv=True``). Keys are
        rotated to positions ``start ..`` under ``positions="rope"``."""
        keys = self._split(self.k_proj(key), self.kv_heads)  # (B, H_kv, Tk, Dh)
        if self.position is not None:
            keys = self.position.rotate(keys, start)
        return KVCache(keys, self._split(self.v_proj(value), self.kv_heads))

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        need_weights: bool = False,
        *,
        cache: KVCache | None = None,
        use_cache: bool = False,
        static_kv: bool = False,
        weights_chunk: int | None = None,
        window: int | None = None,
        sinks: int = 0,
        causal: bool = False,
    ) -> AttentionOutput:
        """Attend from ``query (B, Tq, D)`` to ``key (B, Tk, Dk)`` / ``value (B, Tk, Dv)``.

        Args:
            mask: bool, broadcastable to ``(B, H, Tq, Tk)``, True = may attend; a ``(B, Tk)``
                key-padding mask must be lifted with :func:`key_padding_mask` first. ``Tk``
                counts the cached keys and the new ones.
            need_weights: return per-head weights ``(B, H, Tq, Tk)`` (per query head).
            cache: keys/values from earlier calls. With ``static_kv=False`` (self-attention)
                the new keys/values are appended; with ``static_kv=True`` (cross-attention)
                they are reused and ``key``/``value`` may be None. A static cache of ``B``
                rows serves ``B * G`` query rows, each group of ``G`` consecutive rows
                sharing one cache row (:func:`~attnkit.attention.cache.group_rows`).
            use_cache: return the updated cache in ``output.cache``.
            weights_chunk: with ``need_weights``, compute the weights this many queries at a
                time (:func:`attend_chunked`): the same result, with temporaries of one
                ``(B, H, weights_chunk, Tk)`` block instead of ``(B, H, Tq, Tk)``.
            window: causal sliding-window self-attention: the query at position ``i`` sees
                the keys at ``i - window < j <= i`` (:func:`sliding_window_mask`, combined
                with ``mask``), and the cache returned keeps the last ``window - 1``
                positions (:meth:`KVCache.keep_last`). Positions are absolute: queries sit
                at the cache's :attr:`~KVCache.seen`.
            sinks: with ``window``, the first ``sinks`` positions stay visible and cached
                (StreamingLLM's attention sinks, Xiao et al. 2023).
            causal: a decoder's causal mask (queries: the last ``Tq`` of ``Tk`` positions),
                left to :func:`attend` unbuilt (the fused kernel's ``is_causal``).
        """
        if key is None and value is None and not (static_kv and cache is not None):
            key = value = query  # self-attention, with or without a cache
        self._check_call(static_kv, cache, window, sinks)
        start = 0 if cache is None else cache.seen  # the queries sit at positions start ..
        q = self._split(self.q_proj(query), self.num_heads)  # (B, H, Tq, Dh)
        if self.position is not None:
            q = self.position.rotate(q, start)
        kv = self._keys_values(key, value, cache, static_kv, start)  # (B, H_kv, Tk, Dh) each
        if window is not None:
            mask = combine(mask, self._window_mask(start, q.size(2), kv, window, sinks))
        past = 0 if cache is None else len(cache)  # the queries' offset from the first key
        out = self._attend_rows(q, kv, mask, need_weights, weights_chunk, past, static_kv, causal)
        b, _, tq, _ = out.context.shape
        merged = out.context.transpose(1, 2).reshape(b, tq, self.d_model)  # (B, Tq, D)
        out.context = self.out_proj(merged)  # Concat(heads) W^O
        if use_cache:
            out.cache = kv if window is None else kv.keep_last(window - 1, sinks)
        return out

    def _check_call(self, static_kv, cache, window, sinks) -> None:
        """Clear errors for the combinations a call cannot have."""
        if static_kv and self.position is not None:
            raise ValueError("relative positions are for self-attention, not a static memory")
        if window is not None and (static_kv or window < 1 or sinks < 0):
            raise ValueError(
                f"window={window}, sinks={sinks}: a sliding window is for causal "
                "self-attention (static_kv=False), with window >= 1 and sinks >= 0"
            )
        gap = cache is not None and cache.dropped and cache.sinks and not static_kv
        if gap and self.position is not None and not isinstance(self.position, RotaryPositions):
            raise ValueError(
                "a cache with sinks that dropped positions holds keys that are not contiguous, "
                "which relative position biases cannot place; use positions='rope' (or none), "
                "or sinks=0"
            )

    def _keys_values(self, key, value, cache, static_kv, start) -> KVCache:
        """The keys and values to attend to ``(B, H_kv, Tk, Dh)``: the static cache, or the
        new ones (at positions ``start ..``) appended to the cache."""
        if static_kv and cache is not None:
            return cache  # projected once, reused
        if key is None or value is None:
            raise ValueError("key and value are needed unless a static cache is given")
        kv = self.project_kv(key, value, start=start)  # (B, H_kv, Tk_new, Dh) each
        if cache is not None:
            kv = cache.append(kv.key, kv.value)  # (B, H_kv, T_past + Tk_new, Dh) each
        return kv

    @staticmethod
    def _window_mask(start: int, tq: int, kv: KVCache, window: int, sinks: int) -> Tensor | None:
        """The sliding-window mask ``(Tq, Tk)`` of queries at ``start ..`` over the keys'
        absolute positions; None when it keeps every key (one decoding step over a rolling
        cache), so the fused kernel runs without a mask."""
        device = kv.key.device
        if tq == 1:  # decided on the CPU: no device sync for a decoding step
            allowed = sliding_window_mask_at(torch.tensor([start]), kv.positions(), window, sinks)
            return None if bool(allowed.all()) else allowed.to(device)  # (1, Tk)
        queries = torch.arange(start, start + tq, device=device)  # (Tq,)
        return sliding_window_mask_at(queries, kv.positions(device), window, sinks)  # (Tq, Tk)

    def _attend_rows(self, q, kv, mask, need_weights, weights_chunk, past, static_kv, causal):
        """:meth:`_attend`, with a static cache's rows each serving ``G`` query rows."""
        if causal and (weights_chunk is not None or static_kv):  # chunks: rows of the mask
            mask, causal = combine(mask, causal_mask(q.size(2), len(kv), device=q.device)), False
        k, v = kv.key, kv.value
        groups = cache_groups(q.size(0), k.size(0)) if static_kv else 1
        if groups == 1:
            return self._attend(q, k, v, mask, need_weights, weights_chunk, past, causal)
        grouped = group_rows(q, groups)  # (B, H, G * Tq, Dh): one row's G * Tq queries
        mask = group_mask(mask, q.size(0), groups, q.size(2))  # (B|1, .., G * Tq|1, Tk)
        out = self._attend(grouped, k, v, mask, need_weights, weights_chunk, past)
        return ungroup_output(out, groups)  # (B * G, H, Tq, ..)

    def _attend(
        self, q, k, v, mask, need_weights, weights_chunk, past, causal=False
    ) -> AttentionOutput:
        """The attention step on head-split ``(B, H, T, Dh)`` tensors, with the position
        scheme's score bias and value term."""
        scheme = self.position
        bias = None if scheme is None else scheme.bias(q, k.size(-2), past)  # (.., Tq, Tk)
        weights_wanted = need_weights or (scheme is not None and scheme.needs_weights)
        options = dict(
            score=self.score,
            normaliser=self.normaliser,
            dropout=self.dropout if self.training else 0.0,
            bias=bias,
        )
        if weights_wanted and weights_chunk is not None:
            out = attend_chunked(q, k, v, mask, chunk=weights_chunk, **options)
        else:
            out = attend(q, k, v, mask, need_weights=weights_wanted, causal=causal, **options)
        if scheme is not None and scheme.needs_weights:
            out.context = out.context + scheme.value_term(out.weights, past)  # (B, H, Tq, Dh)
            out.weights = out.weights if need_weights else None
        return out
