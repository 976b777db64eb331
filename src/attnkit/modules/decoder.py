"""Transformer decoder blocks (Vaswani et al. 2017, §3.1 "Decoder") on attnkit's attention.

One layer has three sub-layers, each with a residual connection and LayerNorm:

1. masked multi-head self-attention over the target prefix (the causal mask keeps position
   ``i`` from seeing positions after ``i``);
2. multi-head cross-attention ("encoder-decoder attention", §3.2.3): queries from the
   decoder, keys and values from the encoder's output (the memory);
3. the position-wise feed-forward network ``act(x W_1 + b_1) W_2 + b_2`` (§3.3, eq. (2)).

Post-LN (the paper): ``x = LN(x + Sublayer(x))``; pre-LN (Xiong et al. 2020):
``x = x + Sublayer(LN(x))``, with a final LayerNorm after the stack.

Step-by-step decoding uses a :class:`DecoderLayerCache` per layer: the self-attention
:class:`~attnkit.attention.KVCache` grows by one position per step; the cross-attention one is
the memory projected once (:meth:`TransformerDecoderLayer.init_cache`) and reused. All cache
tensors are ``(B, H, T, Dh)``, batch first, so beam search can reorder them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass

from torch import Tensor, nn

from attnkit.attention import KVCache, MultiHeadAttention
from attnkit.modules.seq2seq import shared_by_beams
from attnkit.modules.transformer import check_layer_options, position_wise


@dataclass
class DecoderLayerCache:
    """One layer's decoding cache: ``self_attn`` grows each step, ``cross_attn`` is static.

    ``cross_attn`` is :func:`~attnkit.modules.seq2seq.shared_by_beams`: in beam search it keeps
    one row per sentence, which the sentence's beams (consecutive query rows) share.
    """

    self_attn: KVCache
    cross_attn: KVCache = shared_by_beams()


@dataclass
class DecoderLayerOutput:
    """What one decoder layer returns.

    Attributes:
        hidden: ``(B, T, D)``.
        self_weights: ``(B, H, T, T_keys)`` masked self-attention weights (``T_keys`` counts
            cached positions too), or ``None`` unless ``need_weights``.
        cross_weights: ``(B, H, T, S)`` weights over the memory, or ``None``.
        cache: the updated cache when one was passed in, else ``None``.
    """

    hidden: Tensor
    self_weights: Tensor | None = None
    cross_weights: Tensor | None = None
    cache: DecoderLayerCache | None = None


@dataclass
class DecoderOutput:
    """What a stack of ``L`` decoder layers returns.

    Attributes:
        last_hidden: ``(B, T, D)`` after the final norm, if there is one.
        self_attentions, cross_attentions: ``L`` tensors each, as in
            :class:`DecoderLayerOutput`; ``None`` unless ``need_weights``.
        cache: ``L`` updated :class:`DecoderLayerCache`, when caches were passed in.
    """

    last_hidden: Tensor
    self_attentions: tuple[Tensor, ...] | None = None
    cross_attentions: tuple[Tensor, ...] | None = None
    cache: list[DecoderLayerCache] | None = None


class TransformerDecoderLayer(nn.Module):
    """Masked self-attention + cross-attention + feed-forward (Vaswani et al. 2017, §3.1).

    Args:
        d_model: width D.
        num_heads: H, must divide ``d_model``.
        d_ff: inner width of the feed-forward network.
        dropout: on each sub-layer's output and inside the FFN (§5.4 "residual dropout").
        activation: ``"relu"`` (the paper) or ``"gelu"`` (exact erf form).
        norm_first: pre-LN when True, post-LN (the paper) when False.
        layer_norm_eps: epsilon of the three LayerNorms.
        attention_dropout: dropout on the attention weights; defaults to ``dropout``.
        positions: a relative position scheme of the masked self-attention (``"shaw"``,
            ``"t5"``, ``"alibi"``, ``"rope"``; :mod:`attnkit.attention.positions`), or None;
            cross-attention has none (the source and target positions are not comparable).
        position_options: its keywords; ``causal=True`` is added (T5's one-sided buckets).

    Parameter names follow :class:`torch.nn.TransformerDecoderLayer` (``self_attn``,
    ``multihead_attn``, ``linear1``, ``linear2``, ``norm1``, ``norm2``, ``norm3``); the two
    attentions are :class:`attnkit.attention.MultiHeadAttention` with separate
    ``q_proj``/``k_proj``/``v_proj`` where torch packs ``in_proj_weight = [W_q; W_k; W_v]``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
        attention_dropout: float | None = None,
        positions: str | None = None,
        position_options: dict | None = None,
    ) -> None:
        super().__init__()
        check_layer_options(activation, dropout)
        attention_dropout = dropout if attention_dropout is None else attention_dropout
        self.activation, self.norm_first = activation, norm_first
        self.self_attn = MultiHeadAttention(
            d_model,
            num_heads,
            dropout=attention_dropout,
            positions=positions,
            position_options={**(position_options or {}), "causal": True},
        )
        self.multihead_attn = MultiHeadAttention(d_model, num_heads, dropout=attention_dropout)
        self.linear1 = nn.Linear(d_model, d_ff)  # W_1, b_1
        self.linear2 = nn.Linear(d_ff, d_model)  # W_2, b_2
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)  # around self-attention
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)  # around cross-attention
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)  # around the FFN
        self.dropout = nn.Dropout(dropout)  # inside the FFN
        self.dropout1 = nn.Dropout(dropout)  # on the self-attention output
        self.dropout2 = nn.Dropout(dropout)  # on the cross-attention output
        self.dropout3 = nn.Dropout(dropout)  # on the FFN output

    def init_cache(self, memory: Tensor) -> DecoderLayerCache:
        """The cache before the first step: the memory ``(B, S, D)`` projected once to
        cross-attention keys/values ``(B, H, S, Dh)``, and an empty self-attention cache
        ``(B, H, 0, Dh)``."""
        cross = self.multihead_attn.project_kv(memory, memory)  # (B, H, S, Dh) each
        b = memory.size(0)
        empty = memory.new_zeros(b, self.self_attn.num_heads, 0, self.self_attn.head_dim)
        return DecoderLayerCache(KVCache(empty, empty.clone()), cross)  # (B, H, 0, Dh)

    def _residual(self, x: Tensor, sublayer: Tensor, norm: nn.LayerNorm) -> Tensor:
        """Pre-LN ``x + Sublayer(LN(x))`` (the sublayer saw ``LN(x)``) or post-LN
        ``LN(x + Sublayer(x))`` (Vaswani et al. 2017, §3.1)."""
        return x + sublayer if self.norm_first else norm(x + sublayer)

    def _feed_forward(self, x: Tensor) -> Tensor:
        ffn = position_wise(x, self.linear1, self.linear2, self.dropout, self.activation)
        return self.dropout3(ffn)  # (B, T, D)

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        need_weights: bool = False,
        cache: DecoderLayerCache | None = None,
    ) -> DecoderLayerOutput:
        """Decode ``x (B, T, D)`` against ``memory (B, S, D)``.

        Args:
            memory: the encoder output; may be None when ``cache`` holds its projection.
            self_mask: bool, broadcastable to ``(B, H, T, T_keys)``, True = may attend; in
                teacher forcing the causal mask ``causal_mask(T)``. With a cache and one new
                position per step it can be None (every cached position is in the past).
            memory_mask: bool, broadcastable to ``(B, H, T, S)``, e.g.
                ``key_padding_mask(src_mask)``.
            need_weights: return both attentions' weights (the readable path); without them
                the fused kernel runs.
            cache: the layer's cache; the new positions' keys/values are appended and the
                updated cache is returned in ``output.cache``.
        """
        use_cache = cache is not None
        self_cache = cache.self_attn if use_cache else None
        cross_cache = cache.cross_attn if use_cache else None
        if memory is None and cross_cache is None:
            raise ValueError("memory is needed unless the cache holds its projection")

        h = self.norm1(x) if self.norm_first else x  # (B, T, D)
        sa = self.self_attn(h, h, h, self_mask, need_weights, cache=self_cache, use_cache=use_cache)
        x = self._residual(x, self.dropout1(sa.context), self.norm1)

        h = self.norm2(x) if self.norm_first else x
        ca = self.multihead_attn(
            h,
            memory,
            memory,
            memory_mask,
            need_weights,
            cache=cross_cache,
            use_cache=use_cache,
            static_kv=True,
        )
        x = self._residual(x, self.dropout2(ca.context), self.norm2)

        h = self.norm3(x) if self.norm_first else x
        x = self._residual(x, self._feed_forward(h), self.norm3)  # (B, T, D)
        new_cache = DecoderLayerCache(sa.cache, ca.cache) if use_cache else None
        return DecoderLayerOutput(x, sa.weights, ca.weights, new_cache)


class TransformerDecoder(nn.Module):
    """A stack of decoder layers (Vaswani et al. 2017 §3.1: N = 6) with an optional final norm.

    Args:
        layers: applied in order (e.g. :class:`TransformerDecoderLayer`).
        norm: final LayerNorm after the last layer (pre-LN stacks need one).
    """

    def __init__(self, layers: Iterable[nn.Module], norm: nn.Module | None = None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm

    @classmethod
    def from_layer(
        cls, layer: nn.Module, num_layers: int, norm: nn.Module | None = None
    ) -> TransformerDecoder:
        """``num_layers`` deep copies of ``layer`` (independent parameters)."""
        if num_layers < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        return cls([copy.deepcopy(layer) for _ in range(num_layers)], norm)

    def init_cache(self, memory: Tensor) -> list[DecoderLayerCache]:
        """Every layer's cache before the first step (memory projected once per layer)."""
        return [layer.init_cache(memory) for layer in self.layers]

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        need_weights: bool = False,
        cache: list[DecoderLayerCache] | None = None,
    ) -> DecoderOutput:
        """Decode ``x (B, T, D)`` through every layer; arguments as
        :meth:`TransformerDecoderLayer.forward`, with one cache per layer."""
        if cache is not None and len(cache) != len(self.layers):
            raise ValueError(f"got {len(cache)} layer caches for {len(self.layers)} layers")
        selfs, crosses, caches = [], [], []
        for i, layer in enumerate(self.layers):
            out = layer(
                x,
                memory,
                self_mask,
                memory_mask,
                need_weights,
                None if cache is None else cache[i],
            )
            x = out.hidden  # (B, T, D)
            selfs.append(out.self_weights)
            crosses.append(out.cross_weights)
            caches.append(out.cache)
        last = self.norm(x) if self.norm is not None else x
        return DecoderOutput(
            last,
            tuple(selfs) if need_weights else None,
            tuple(crosses) if need_weights else None,
            caches if cache is not None else None,
        )
