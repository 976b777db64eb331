"""A Transformer decoder over the annotation grid, the option beside the paper's LSTM
(``model.decoder: transformer``).

Deng et al. (2017) decode with an LSTM and attention (:mod:`~attnkit.apps.im2latex.decoder`);
here the same annotations ``V~ (B, R * C, D)`` are the memory of a stack of Transformer decoder
layers (Vaswani et al. 2017, §3.1: masked self-attention over the tokens so far, then
multi-head cross-attention over the grid, then a feed-forward network), from
:class:`attnkit.modules.decoder.TransformerDecoder`. The row encoder's learned row states and
its left-to-right LSTM already tell each annotation where it is, so the grid needs no further
positional encoding; the tokens get sinusoidal positions (§3.5).

What a picture shows as "the attention of a step" is the last layer's cross-attention averaged
over its heads, ``(B, 1, L)``, like the LSTM decoder's single attention.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.attention import causal_mask, key_padding_mask
from attnkit.modules.decoder import DecoderLayerCache, TransformerDecoder, TransformerDecoderLayer
from attnkit.modules.embeddings import TransformerEmbedding
from attnkit.modules.seq2seq import Memory


@dataclass
class GridDecoderState:
    """Per layer the self-attention cache ``(B, H, t, Dh)`` and the grid's projected
    keys/values ``(B, H, L, Dh)``; ``step (B,)`` the position of the next input token."""

    layers: list[DecoderLayerCache]
    step: Tensor


class GridTransformerDecoder(nn.Module):
    """Token embedding with positions -> ``layers`` decoder layers -> vocabulary logits.

    Args:
        vocab: output vocabulary size.
        d_annotation: width of the annotations, projected to ``d_model`` once per image.
        d_model, heads, d_ff, layers: the stack's shape (``heads`` divides ``d_model``).
        dropout: residual, embedding and attention dropout (Vaswani et al. §5.4).
        max_len: the longest token sequence (sinusoidal positions need no table, but the
            embedding checks it).
    """

    def __init__(
        self,
        vocab: int,
        d_annotation: int,
        *,
        d_model: int,
        heads: int,
        d_ff: int,
        layers: int,
        dropout: float = 0.1,
        pad_id: int = 0,
        max_len: int = 512,
    ) -> None:
        super().__init__()
        if d_model % heads:
            raise ValueError(f"heads ({heads}) must divide d_model ({d_model})")
        self.bridge = nn.Linear(d_annotation, d_model)  # V~ -> the decoder's width
        self.embed = TransformerEmbedding(
            vocab,
            d_model,
            pad_id=pad_id,
            positional="sinusoidal",
            max_len=max_len,
            dropout=dropout,
        )
        layer = TransformerDecoderLayer(d_model, heads, d_ff, dropout=dropout, norm_first=True)
        self.stack = TransformerDecoder.from_layer(layer, layers, nn.LayerNorm(d_model))
        self.output = nn.Linear(d_model, vocab)

    def initial(self, memory: Memory) -> GridDecoderState:
        """Project the grid once into every layer's cross-attention cache; step 0."""
        grid = self.bridge(memory.states)  # (B, L, D_ann) -> (B, L, d_model)
        step = torch.zeros(grid.size(0), dtype=torch.long, device=grid.device)  # (B,)
        return GridDecoderState(self.stack.init_cache(grid), step)

    def step(
        self, memory: Memory, state: GridDecoderState, prev: Tensor, need_weights: bool
    ) -> tuple[Tensor, GridDecoderState, Tensor | None]:
        """Feed ``prev (B,)``: logits ``(B, V)``, the new state and the last layer's
        cross-attention averaged over heads ``(B, 1, L)`` (None unless ``need_weights``)."""
        x = self.embed(prev.unsqueeze(1), offset=state.step)  # (B, 1, d_model)
        out = self.stack(
            x,
            None,
            self_mask=None,
            memory_mask=key_padding_mask(memory.mask),
            need_weights=need_weights,
            cache=state.layers,
        )
        logits = self.output(out.last_hidden.squeeze(1))  # (B, 1, d) -> (B, V)
        weights = (
            out.cross_attentions[-1].mean(1) if need_weights else None
        )  # (B, H, 1, L) -> (B, 1, L)
        return logits, GridDecoderState(out.cache, state.step + 1), weights

    def teacher_forced(
        self, memory: Memory, tgt_in: Tensor, need_weights: bool
    ) -> tuple[Tensor, Tensor | None]:
        """All steps at once under a causal mask: logits ``(B, T, V)`` and, when asked, the
        last layer's head-averaged cross-attention ``(B, 1, T, L)``."""
        grid = self.bridge(memory.states)  # (B, L, d_model)
        t = tgt_in.size(1)
        out = self.stack(
            self.embed(tgt_in),
            grid,
            self_mask=causal_mask(t, device=tgt_in.device),
            memory_mask=key_padding_mask(memory.mask),
            need_weights=need_weights,
        )
        weights = out.cross_attentions[-1].mean(1, keepdim=True) if need_weights else None
        return self.output(out.last_hidden), weights  # (B, T, V), (B, H, T, L) -> (B, 1, T, L)
