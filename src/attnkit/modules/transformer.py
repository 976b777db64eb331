"""Transformer encoder blocks (Vaswani et al. 2017, §3.1 and §3.3) built on attnkit's attention.

One layer is multi-head self-attention followed by a position-wise feed-forward network, each
wrapped in a residual connection and layer normalisation:

- post-LN (Vaswani et al. 2017 §3.1, BERT): ``x = LN(x + Sublayer(x))``;
- pre-LN (Xiong et al. 2020): ``x = x + Sublayer(LN(x))``, usually with a final LayerNorm
  after the stack.

The feed-forward network is ``FFN(x) = act(x W_1 + b_1) W_2 + b_2`` (Vaswani et al. 2017 §3.3,
eq. (2)) with ``act`` ReLU (the paper) or exact, erf-based GELU (BERT, Hendrycks & Gimpel 2016).

Attention weights are returned, never stored: :class:`EncoderLayerOutput` for one layer,
:class:`EncoderOutput` for the stack.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass

import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.attention import MultiHeadAttention

ACTIVATIONS = ("gelu", "relu")


def check_layer_options(activation: str, dropout: float) -> None:
    """The checks every Transformer layer makes of its options, with messages that say why."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {dropout}")


def position_wise(x: Tensor, linear1: nn.Linear, linear2: nn.Linear, inner_dropout, activation):
    """``FFN(x) = act(x W_1 + b_1) W_2 + b_2`` (Vaswani et al. 2017, eq. (2)); ``F.gelu`` is the
    exact erf form BERT uses. Returns ``(B, T, D)``, before the sub-layer's output dropout."""
    act = F.gelu if activation == "gelu" else F.relu
    return linear2(inner_dropout(act(linear1(x))))  # (B, T, d_ff) inside


@dataclass
class EncoderLayerOutput:
    """What one encoder layer returns.

    Attributes:
        hidden: ``(B, T, D)`` the layer's output.
        weights: ``(B, H, T, T)`` per-head self-attention weights (query rows, key columns),
            or ``None`` unless ``need_weights=True``.
    """

    hidden: Tensor
    weights: Tensor | None = None


@dataclass
class EncoderOutput:
    """What an encoder stack of ``L`` layers returns.

    Attributes:
        last_hidden: ``(B, T, D)`` the stack's output (after the final norm, if there is one).
        hidden_states: ``L + 1`` tensors ``(B, T, D)``: the stack's input, then the output of
            each layer (before any final norm), as Hugging Face's ``output_hidden_states``;
            ``None`` unless ``output_hidden_states=True``.
        attentions: ``L`` tensors ``(B, H, T, T)``, the self-attention weights of each layer
            (``attentions[l][b, h, i, j]``: how much query ``i`` attends to key ``j``);
            ``None`` unless ``need_weights=True``.
    """

    last_hidden: Tensor
    hidden_states: tuple[Tensor, ...] | None = None
    attentions: tuple[Tensor, ...] | None = None


class TransformerEncoderLayer(nn.Module):
    """Self-attention + feed-forward, each with a residual and LayerNorm (Vaswani 2017 §3.1).

    Args:
        d_model: width D.
        num_heads: H, must divide ``d_model``.
        d_ff: inner width of the feed-forward network (Vaswani et al. 2017 §3.3: 2048 for
            D = 512).
        dropout: dropout on each sub-layer's output and inside the feed-forward network
            (Vaswani et al. 2017 §5.4, "residual dropout").
        activation: ``"gelu"`` (exact erf GELU, as BERT) or ``"relu"`` (the paper).
        norm_first: pre-LN when True; post-LN (the paper, BERT) when False.
        layer_norm_eps: epsilon of both LayerNorms (BERT uses 1e-12).
        attention_dropout: dropout on the attention weights; defaults to ``dropout``.
        positions: a relative position scheme of the self-attention (``"shaw"``, ``"t5"``,
            ``"alibi"``, ``"rope"``; :mod:`attnkit.attention.positions`), or None.
        position_options: its keywords (``max_distance``, ``relative_values``, ...).

    Parameter names follow :class:`torch.nn.TransformerEncoderLayer` where they can
    (``self_attn``, ``linear1``, ``linear2``, ``norm1``, ``norm2``); ``self_attn`` is an
    :class:`attnkit.attention.MultiHeadAttention` with separate ``q_proj``/``k_proj``/``v_proj``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        activation: str = "gelu",
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
            position_options=position_options,
        )
        self.linear1 = nn.Linear(d_model, d_ff)  # W_1, b_1
        self.linear2 = nn.Linear(d_ff, d_model)  # W_2, b_2
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)  # around self-attention
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)  # around the feed-forward net
        self.dropout = nn.Dropout(dropout)  # inside the FFN
        self.dropout1 = nn.Dropout(dropout)  # on the self-attention output
        self.dropout2 = nn.Dropout(dropout)  # on the FFN output

    def _self_attention(self, x: Tensor, mask: Tensor | None, need_weights: bool):
        out = self.self_attn(x, x, x, mask=mask, need_weights=need_weights)
        return self.dropout1(out.context), out.weights  # (B, T, D), (B, H, T, T) | None

    def _feed_forward(self, x: Tensor) -> Tensor:
        ffn = position_wise(x, self.linear1, self.linear2, self.dropout, self.activation)
        return self.dropout2(ffn)  # (B, T, D)

    def forward(
        self, x: Tensor, mask: Tensor | None = None, need_weights: bool = False
    ) -> EncoderLayerOutput:
        """Encode ``x (B, T, D)``.

        Args:
            mask: bool, broadcastable to ``(B, H, T, T)``, True = may attend. Lift a ``(B, T)``
                keep-mask of real tokens with :func:`attnkit.attention.key_padding_mask`.
            need_weights: also return the per-head weights ``(B, H, T, T)``; without them the
                fused ``scaled_dot_product_attention`` kernel runs.

        Padding positions are computed like any query (their outputs are not zeroed); they
        never influence real positions when masked as keys.
        """
        if self.norm_first:
            attn, weights = self._self_attention(self.norm1(x), mask, need_weights)
            x = x + attn  # (B, T, D)
            x = x + self._feed_forward(self.norm2(x))
        else:
            attn, weights = self._self_attention(x, mask, need_weights)
            x = self.norm1(x + attn)  # LayerNorm(x + Sublayer(x)), §3.1
            x = self.norm2(x + self._feed_forward(x))
        return EncoderLayerOutput(x, weights)


class TransformerEncoder(nn.Module):
    """A stack of encoder layers (Vaswani et al. 2017 §3.1: N = 6 identical layers).

    Args:
        layers: the layers, applied in order; each is called as ``layer(x, mask, need_weights)``
            and returns an :class:`EncoderLayerOutput` (e.g. :class:`TransformerEncoderLayer`).
        norm: optional final LayerNorm, applied to the last layer's output (needed by pre-LN
            stacks).

    Build ``N`` fresh copies of one layer configuration with :meth:`from_layer`.
    """

    def __init__(self, layers: Iterable[nn.Module], norm: nn.Module | None = None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm

    @classmethod
    def from_layer(
        cls, layer: nn.Module, num_layers: int, norm: nn.Module | None = None
    ) -> TransformerEncoder:
        """``num_layers`` deep copies of ``layer`` (independent parameters)."""
        if num_layers < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        return cls([copy.deepcopy(layer) for _ in range(num_layers)], norm)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = False,
        output_hidden_states: bool = False,
    ) -> EncoderOutput:
        """Encode ``x (B, T, D)`` through every layer; see :class:`EncoderOutput`.

        Args:
            mask: bool, broadcastable to ``(B, H, T, T)``, True = may attend; shared by all
                layers.
            need_weights: collect every layer's weights ``(B, H, T, T)`` in
                ``output.attentions``.
            output_hidden_states: collect the input and every layer's output in
                ``output.hidden_states``.
        """
        hidden_states = [x] if output_hidden_states else None
        attentions = [] if need_weights else None
        for layer in self.layers:
            out = layer(x, mask, need_weights)
            x = out.hidden  # (B, T, D)
            if hidden_states is not None:
                hidden_states.append(x)
            if attentions is not None:
                attentions.append(out.weights)
        last = self.norm(x) if self.norm is not None else x
        return EncoderOutput(
            last,
            tuple(hidden_states) if hidden_states is not None else None,
            tuple(attentions) if attentions is not None else None,
        )
