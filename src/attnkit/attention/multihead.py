"""Multi-head attention (Vaswani et al. 2017, §3.2.2) for self- and cross-attention.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O``, ``head_i = Attention(Q W_i^Q, K W_i^K,
V W_i^V)``. The heads are one projection each, split along the feature axis.
"""

from __future__ import annotations

from torch import Tensor, nn

from attnkit.attention.cache import (
    KVCache,
    cache_groups,
    group_mask,
    group_rows,
    ungroup_output,
)
from attnkit.attention.functional import AttentionOutput, attend, attend_chunked
from attnkit.attention.positions import build_positions
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
    ) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}; "
                "choose num_heads that divides d_model"
            )
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.normaliser = normaliser
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)  # W^Q for all heads
        self.k_proj = nn.Linear(kdim or d_model, d_model, bias=bias)  # W^K
        self.v_proj = nn.Linear(vdim or d_model, d_model, bias=bias)  # W^V
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

    def _split(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        x = x.view(b, t, self.num_heads, self.head_dim)  # (B, T, H, Dh)
        return x.transpose(1, 2)  # (B, H, T, Dh)

    def project_kv(self, key: Tensor, value: Tensor, start: int = 0) -> KVCache:
        """Project a memory once into per-head keys and values ``(B, H, Tk, Dh)``: the static
        cache of cross-attention (pass it back with ``static_kv=True``). Keys are rotated to
        positions ``start ..`` under ``positions="rope"``."""
        keys = self._split(self.k_proj(key))  # (B, H, Tk, Dh)
        if self.position is not None:
            keys = self.position.rotate(keys, start)
        return KVCache(keys, self._split(self.v_proj(value)))

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
    ) -> AttentionOutput:
        """Attend from ``query (B, Tq, D)`` to ``key (B, Tk, Dk)`` / ``value (B, Tk, Dv)``.

        Args:
            mask: bool, broadcastable to ``(B, H, Tq, Tk)``, True = may attend; a ``(B, Tk)``
                key-padding mask must be lifted with :func:`key_padding_mask` first.
            need_weights: return per-head weights ``(B, H, Tq, Tk)``.
            cache: keys/values from earlier calls. With ``static_kv=False`` (self-attention)
                the new keys/values are appended; with ``static_kv=True`` (cross-attention)
                they are reused and ``key``/``value`` may be None. A static cache of ``B``
                rows serves ``B * G`` query rows, each group of ``G`` consecutive rows
                sharing one cache row (:func:`~attnkit.attention.cache.group_rows`).
            use_cache: return the updated cache in ``output.cache``.
            weights_chunk: with ``need_weights``, compute the weights this many queries at a
                time (:func:`attend_chunked`): the same result, with temporaries of one
                ``(B, H, weights_chunk, Tk)`` block instead of ``(B, H, Tq, Tk)``.
        """
        if key is None and value is None and cache is None:
            key = value = query  # self-attention
        if static_kv and self.position is not None:
            raise ValueError("relative positions are for self-attention, not a static memory")
        past = 0 if cache is None else len(cache)  # the queries sit at positions past ..
        q = self._split(self.q_proj(query))  # (B, H, Tq, Dh)
        if self.position is not None:
            q = self.position.rotate(q, past)
        if static_kv and cache is not None:
            kv = cache  # projected once, reused
        else:
            if key is None or value is None:
                raise ValueError("key and value are needed unless a static cache is given")
            kv = self.project_kv(key, value, start=past)  # (B, H, Tk_new, Dh) each
            if cache is not None:
                kv = cache.append(kv.key, kv.value)  # (B, H, T_past + Tk_new, Dh) each
        k, v = kv.key, kv.value
        groups = cache_groups(q.size(0), k.size(0)) if static_kv else 1
        if groups > 1:  # G query rows per cache row: attend as one row's G * Tq queries
            grouped = group_rows(q, groups)  # (B, H, G * Tq, Dh)
            mask = group_mask(mask, q.size(0), groups, q.size(2))  # (B|1, .., G * Tq|1, Tk)
            out = self._attend(grouped, k, v, mask, need_weights, weights_chunk, past)
            out = ungroup_output(out, groups)  # (B * G, H, Tq, ..)
        else:
            out = self._attend(q, k, v, mask, need_weights, weights_chunk, past)
        b, _, tq, _ = out.context.shape
        merged = out.context.transpose(1, 2).reshape(b, tq, self.d_model)  # (B, Tq, D)
        out.context = self.out_proj(merged)  # Concat(heads) W^O
        if use_cache:
            out.cache = kv
        return out

    def _attend(self, q, k, v, mask, need_weights, weights_chunk, past) -> AttentionOutput:
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
            out = attend(q, k, v, mask, need_weights=weights_wanted, **options)
        if scheme is not None and scheme.needs_weights:
            out.context = out.context + scheme.value_term(out.weights, past)  # (B, H, Tq, Dh)
            out.weights = out.weights if need_weights else None
        return out
