"""The Transformer encoder-decoder for translation (Vaswani et al. 2017, §3, Figure 1).

Embed (scaled token embeddings + positions, §3.4-3.5) -> Encode (N self-attention layers)
-> Attend (each decoder layer: masked self-attention, then cross-attention to the encoder
output) -> Predict (a linear map to the target vocabulary, optionally tied to the target
embedding, §3.4).

Two ways to run it, as every :class:`~attnkit.modules.seq2seq.Seq2SeqModel`:

- :meth:`TransformerSeq2Seq.forward`: teacher forcing with a causal mask over the target and
  a padding mask over the source; the fused attention kernel unless weights are asked for.
- :meth:`~TransformerSeq2Seq.encode`, :meth:`~TransformerSeq2Seq.init_state`,
  :meth:`~TransformerSeq2Seq.decode_step`: one token at a time with key/value caches. The
  state (:class:`TransformerState`) holds batch-first tensors only, so
  :func:`~attnkit.modules.seq2seq.reorder_state` reorders it for beam search.

Attention names: ``"layer{l}.self"`` and ``"layer{l}.cross"``, ``l = 0 .. L-1`` counting
decoder layers from the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.attention import causal_mask, key_padding_mask
from attnkit.attention.positions import POSITIONS, RELATIVE
from attnkit.modules.decoder import DecoderLayerCache, TransformerDecoder, TransformerDecoderLayer
from attnkit.modules.embeddings import TransformerEmbedding
from attnkit.modules.seq2seq import Memory, ModelOutput, Seq2SeqModel, StepOutput
from attnkit.modules.transformer import TransformerEncoder, TransformerEncoderLayer


@dataclass
class TransformerState:
    """Decoder state between steps, batch first.

    Attributes:
        layers: one :class:`~attnkit.modules.decoder.DecoderLayerCache` per decoder layer:
            self-attention keys/values ``(B, H, t, Dh)`` of the ``t`` positions decoded so far
            and cross-attention keys/values ``(B, H, S, Dh)`` (the memory, projected once).
        step: ``(B,)`` the position of the next input token.
    """

    layers: list[DecoderLayerCache]
    step: Tensor


class TransformerSeq2Seq(Seq2SeqModel):
    """Transformer encoder-decoder (Vaswani et al. 2017).

    Args:
        src_vocab, tgt_vocab: vocabulary sizes.
        d_model, num_heads, d_ff: width D, heads H, feed-forward width (the paper's base model:
            512, 8, 2048).
        encoder_layers, decoder_layers: N for each stack (the paper: 6).
        dropout: residual, embedding and attention-weight dropout (the paper: 0.1).
        attention_dropout: overrides ``dropout`` on the attention weights.
        activation: ``"relu"`` (the paper) or ``"gelu"``.
        norm_first: pre-LN layers with a final LayerNorm after each stack (Xiong et al. 2020);
            post-LN (the paper) when False.
        positional: ``"sinusoidal"`` (§3.5) or ``"learned"`` (``max_len`` positions), used
            when ``positions="absolute"``.
        positions: where word order comes from (:mod:`attnkit.attention.positions`):
            ``"absolute"`` (added to the embeddings, the paper), a relative scheme in every
            self-attention (``"shaw"``, ``"t5"``, ``"alibi"``, ``"rope"``; cross-attention has
            none), or ``"none"``. T5's bias table is shared by the layers of a stack, as in
            Raffel et al. 2020 §2.1.
        position_options: the relative scheme's keywords
            (:func:`~attnkit.attention.positions.build_positions`).
        tie_embeddings: the output projection reuses the target embedding matrix (§3.4).
        share_embeddings: source and target share one embedding matrix (a joint vocabulary;
            needs ``src_vocab == tgt_vocab``).
        max_len: positions of a learned positional table.
        pad_id: padding token id (zero embedding).
        layer_norm_eps: epsilon of every LayerNorm.
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        *,
        d_model: int = 256,
        num_heads: int = 4,
        d_ff: int = 1024,
        encoder_layers: int = 3,
        decoder_layers: int = 3,
        dropout: float = 0.1,
        attention_dropout: float | None = None,
        activation: str = "relu",
        norm_first: bool = False,
        positional: str = "sinusoidal",
        positions: str = "absolute",
        position_options: dict | None = None,
        tie_embeddings: bool = False,
        share_embeddings: bool = False,
        max_len: int = 512,
        pad_id: int = 0,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        _check_options(src_vocab, tgt_vocab, share_embeddings, positions)
        self.pad_id, self.d_model, self.norm_first = pad_id, d_model, norm_first
        self.positions = positions
        absolute = positional if positions == "absolute" else "none"
        embed = {"positional": absolute, "max_len": max_len, "dropout": dropout}
        self.src_embed = TransformerEmbedding(src_vocab, d_model, pad_id=pad_id, **embed)
        self.tgt_embed = TransformerEmbedding(tgt_vocab, d_model, pad_id=pad_id, **embed)
        if share_embeddings:
            self.tgt_embed.token.weight = self.src_embed.token.weight
        layer = {
            "dropout": dropout,
            "activation": activation,
            "norm_first": norm_first,
            "layer_norm_eps": layer_norm_eps,
            "attention_dropout": attention_dropout,
            "positions": positions if positions in RELATIVE else None,
            "position_options": position_options,
        }

        def final_norm() -> nn.LayerNorm | None:
            return nn.LayerNorm(d_model, eps=layer_norm_eps) if norm_first else None

        self.encoder = TransformerEncoder.from_layer(
            TransformerEncoderLayer(d_model, num_heads, d_ff, **layer), encoder_layers, final_norm()
        )
        self.decoder = TransformerDecoder.from_layer(
            TransformerDecoderLayer(d_model, num_heads, d_ff, **layer), decoder_layers, final_norm()
        )
        if positions == "t5":
            _share_position_tables(self.encoder.layers)
            _share_position_tables(self.decoder.layers)
        self.output = nn.Linear(d_model, tgt_vocab)
        if tie_embeddings:
            self.output.weight = self.tgt_embed.token.weight
        self.tie_embeddings, self.share_embeddings = tie_embeddings, share_embeddings

    def encode(self, src: Tensor, src_mask: Tensor) -> Memory:
        """``src (B, S)``, ``src_mask (B, S)`` True at real tokens -> ``Memory(states (B, S, D),
        mask)``; padded positions are masked as keys, so they never reach real ones."""
        x = self.src_embed(src)  # (B, S, D)
        states = self.encoder(x, key_padding_mask(src_mask)).last_hidden  # (B, S, D)
        return Memory(states, src_mask, None)

    def encoder_attention(self, src: Tensor, src_mask: Tensor) -> dict[str, Tensor]:
        """Every encoder layer's self-attention ``{"encoder.layer{l}": (B, H, S, S)}`` (the
        readable path, with weights), as :meth:`forward` records it."""
        encoded = self.encoder(self.src_embed(src), key_padding_mask(src_mask), need_weights=True)
        return {f"encoder.layer{l}": w for l, w in enumerate(encoded.attentions)}

    def init_state(self, memory: Memory) -> TransformerState:
        """Project the memory once into every layer's cross-attention cache; empty
        self-attention caches; step 0."""
        b = memory.states.size(0)
        step = torch.zeros(b, dtype=torch.long, device=memory.states.device)  # (B,)
        return TransformerState(self.decoder.init_cache(memory.states), step)

    def decode_step(
        self, memory: Memory, state: TransformerState, prev: Tensor, need_weights: bool = False
    ) -> StepOutput:
        """Feed ``prev (B,)`` at position ``state.step``; logits ``(B, V)`` for the next token.

        With ``need_weights`` the attention dict holds, per layer ``l``,
        ``"layer{l}.self"`` ``(B, H, t + 1)`` over the target positions so far and
        ``"layer{l}.cross"`` ``(B, H, S)`` over the source.
        """
        x = self.tgt_embed(prev.unsqueeze(1), offset=state.step)  # (B, 1, D)
        out = self.decoder(
            x,
            None,  # the memory's keys/values are in the cache
            self_mask=None,  # one new position attends to every cached (earlier) one
            memory_mask=key_padding_mask(memory.mask),  # (B, 1, 1, S)
            need_weights=need_weights,
            cache=state.layers,
        )
        logits = self.output(out.last_hidden.squeeze(1))  # (B, V)
        attention = {}
        if need_weights:
            attention = self._name_weights(out, lambda w: w.squeeze(2))  # (B, H, Tk)
        return StepOutput(logits, TransformerState(out.cache, state.step + 1), attention)

    def forward(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor, need_weights: bool = False
    ) -> ModelOutput:
        """Teacher forcing: ``tgt_in (B, T)`` starts with BOS; logits ``(B, T, V)``.

        With ``need_weights`` the attention dict holds the encoder's ``"encoder.layer{l}"``
        ``(B, H, S, S)``, and the decoder's ``"layer{l}.self"`` ``(B, H, T, T)`` and
        ``"layer{l}.cross"`` ``(B, H, T, S)``. Target padding needs no mask: it comes
        after the real tokens, which the causal mask already hides it from.
        """
        encoded = self.encoder(
            self.src_embed(src), key_padding_mask(src_mask), need_weights=need_weights
        )
        x = self.tgt_embed(tgt_in)  # (B, T, D)
        t = tgt_in.size(1)
        out = self.decoder(
            x,
            encoded.last_hidden,  # (B, S, D)
            self_mask=causal_mask(t, device=tgt_in.device),  # (T, T)
            memory_mask=key_padding_mask(src_mask),  # (B, 1, 1, S)
            need_weights=need_weights,
        )
        logits = self.output(out.last_hidden)  # (B, T, V)
        attention = {}
        if need_weights:
            for l, weights in enumerate(encoded.attentions):
                attention[f"encoder.layer{l}"] = weights  # (B, H, S, S)
            attention.update(self._name_weights(out, lambda w: w))
        return ModelOutput(logits, attention)

    @staticmethod
    def _name_weights(out, reshape) -> dict[str, Tensor]:
        attention = {}
        for l, (sw, cw) in enumerate(zip(out.self_attentions, out.cross_attentions, strict=True)):
            attention[f"layer{l}.self"] = reshape(sw)
            attention[f"layer{l}.cross"] = reshape(cw)
        return attention


def _check_options(src_vocab: int, tgt_vocab: int, share_embeddings: bool, positions: str):
    if share_embeddings and src_vocab != tgt_vocab:
        raise ValueError(
            f"share_embeddings needs one joint vocabulary, got src_vocab={src_vocab} and "
            f"tgt_vocab={tgt_vocab}; build a joint vocabulary or use tie_embeddings only"
        )
    if positions not in POSITIONS:
        raise ValueError(f"unknown positions {positions!r}; choose one of {POSITIONS}")


def _share_position_tables(layers: nn.ModuleList) -> None:
    """One T5 bias table for a whole stack (Raffel et al. 2020 §2.1: "we share the position
    embedding parameters across all layers"): every layer uses the first layer's."""
    for layer in layers[1:]:
        layer.self_attn.position = layers[0].self_attn.position
