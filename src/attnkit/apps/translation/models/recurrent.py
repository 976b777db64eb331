"""Recurrent encoder-decoder translation with and without attention.

- ``attention="none"``: the bottleneck baseline (Sutskever et al. 2014; Cho et al. 2014): the
  decoder starts from a summary of the final encoder states and never looks back.
- ``"bahdanau"``: attend *before* the recurrent step with the previous state ``s_{i-1}`` as the
  query; the context is fed to the RNN and to the readout (Bahdanau et al. 2015, App. A.2.2).
- Luong styles (``"luong-dot"``, ``"luong-general"``, ``"luong-concat"``, ``"location"``,
  ``"local-m"``, ``"local-p"``): attend *after* the recurrent step with ``h_t`` as the query,
  then ``h~_t = tanh(W_c [c_t; h_t])`` (Luong et al. 2015, eq. (5)) predicts the word and, with
  input feeding (§3.3), is fed to the next step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.attention import (
    AdditiveAttention,
    LocalAttention,
    LocationAttention,
    MultiplicativeAttention,
)
from attnkit.modules.rnn import CELLS, RNNEncoder
from attnkit.modules.seq2seq import Memory, ModelOutput, Seq2SeqModel, StepOutput

RNN_ATTENTION = (
    "none",
    "bahdanau",
    "luong-dot",
    "luong-general",
    "luong-concat",
    "location",
    "local-m",
    "local-p",
)


@dataclass
class RNNState:
    """Decoder state, batch first: ``hidden (B, L, H)`` (a pair for LSTM), the attentional
    vector ``feed (B, H)`` for input feeding (or None), and the target position ``step (B,)``.
    """

    hidden: Tensor | tuple[Tensor, Tensor]
    feed: Tensor | None
    step: Tensor


def build_rnn_attention(kind: str, d_query: int, d_key: int, *, window: int, max_keys: int):
    """The attention layer for ``kind`` (one of :data:`RNN_ATTENTION`), or None."""
    if kind == "none":
        return None
    if kind == "bahdanau":
        return AdditiveAttention(d_query, d_key, d_query)
    if kind.startswith("luong-"):
        return MultiplicativeAttention(d_query, d_key, method=kind.removeprefix("luong-"))
    if kind == "location":
        return LocationAttention(d_query, max_keys=max_keys)
    if kind in ("local-m", "local-p"):
        return LocalAttention(d_query, d_key, window=kind, half_width=window, score="general")
    raise ValueError(f"unknown attention {kind!r}; choose one of {RNN_ATTENTION}")


class RNNSeq2Seq(Seq2SeqModel):
    """GRU/LSTM encoder-decoder; see the module docstring for the attention variants."""

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        *,
        embed_dim: int = 256,
        hidden_dim: int = 512,
        encoder_layers: int = 1,
        decoder_layers: int = 1,
        cell: str = "gru",
        bidirectional: bool = True,
        attention: str = "bahdanau",
        input_feeding: bool = True,
        bridge: bool = True,
        dropout: float = 0.2,
        local_window: int = 10,
        max_source_len: int = 256,
        tie_embeddings: bool = False,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        self.pad_id, self.attention_kind = pad_id, attention
        self.bahdanau = attention == "bahdanau"
        self.input_feeding = input_feeding and attention not in ("none", "bahdanau")
        self.encoder = RNNEncoder(
            src_vocab,
            embed_dim,
            hidden_dim // 2 if bidirectional else hidden_dim,
            num_layers=encoder_layers,
            dropout=dropout,
            cell=cell,
            bidirectional=bidirectional,
            decoder_dim=hidden_dim,
            decoder_layers=decoder_layers,
            bridge=bridge or attention == "none",
            pad_id=pad_id,
        )
        d_enc = self.encoder.output_dim
        self.attention = build_rnn_attention(
            attention, hidden_dim, d_enc, window=local_window, max_keys=max_source_len
        )
        self.embed = nn.Embedding(tgt_vocab, embed_dim, padding_idx=pad_id)
        rnn_in = embed_dim + (d_enc if self.bahdanau else hidden_dim if self.input_feeding else 0)
        self.rnn = CELLS[cell](
            rnn_in,
            hidden_dim,
            num_layers=decoder_layers,
            batch_first=True,
            dropout=dropout if decoder_layers > 1 else 0.0,
        )
        self.readout = self._readout(hidden_dim, d_enc, embed_dim)
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(hidden_dim, tgt_vocab)
        if tie_embeddings:
            if embed_dim != hidden_dim:
                raise ValueError("tie_embeddings needs embed_dim == hidden_dim")
            self.output.weight = self.embed.weight
        self.hidden_dim, self.decoder_layers, self.cell = hidden_dim, decoder_layers, cell

    def _readout(self, hidden_dim: int, d_enc: int, embed_dim: int) -> nn.Linear | None:
        """The layer between the decoder state and the output projection."""
        if self.bahdanau:  # readout from [s_i; c_i; E y_{i-1}] (Bahdanau et al. 2015 A.2.2)
            return nn.Linear(hidden_dim + d_enc + embed_dim, hidden_dim)
        if self.attention is not None:  # h~_t = tanh(W_c [c_t; h_t]) (Luong eq. (5))
            return nn.Linear(d_enc + hidden_dim, hidden_dim)
        return None

    def encode(self, src: Tensor, src_mask: Tensor) -> Memory:
        states, final = self.encoder(src, src_mask)  # (B, S, D_enc), (B, L, H)
        keys = None if self.attention is None else self.attention.prepare_key(states)
        return Memory(states, src_mask, final, keys)

    def init_state(self, memory: Memory) -> RNNState:
        b = memory.states.size(0)
        hidden = memory.final
        if hidden is None:
            zeros = memory.states.new_zeros(b, self.decoder_layers, self.hidden_dim)
            hidden = (zeros, zeros.clone()) if self.cell == "lstm" else zeros
        feed = memory.states.new_zeros(b, self.hidden_dim) if self.input_feeding else None
        step = torch.zeros(b, dtype=torch.long, device=memory.states.device)
        return RNNState(hidden, feed, step)

    def _attend(self, query: Tensor, memory: Memory, step: Tensor, need_weights: bool):
        """``query (B, 1, H)`` -> context ``(B, 1, D_enc)`` and weights ``(B, 1, S)``."""
        mask = memory.mask[:, None, :]  # (B, 1, S)
        if isinstance(self.attention, LocalAttention):
            out = self.attention(
                query,
                memory.states,
                mask=mask,
                source_lengths=memory.mask.sum(1),
                positions=step[:, None],
                prepared_key=memory.keys,
                need_weights=need_weights,
            )
        else:
            out = self.attention(
                query, memory.states, mask=mask, prepared_key=memory.keys, need_weights=need_weights
            )
        return out.context, out.weights

    def _rnn(self, x: Tensor, hidden):
        """One recurrent step on ``x (B, 1, I)`` with batch-first state ``(B, L, H)``."""
        if self.cell == "lstm":
            h, c = (t.transpose(0, 1).contiguous() for t in hidden)  # (L, B, H)
            out, (h, c) = self.rnn(x, (h, c))
            return out, (h.transpose(0, 1), c.transpose(0, 1))
        out, h = self.rnn(x, hidden.transpose(0, 1).contiguous())  # out (B, 1, H)
        return out, h.transpose(0, 1)  # (B, L, H)

    def _advance(self, memory: Memory, state: RNNState, emb: Tensor, need_weights: bool):
        """One decoder step up to the readout, from the embedded previous token ``emb
        (B, 1, E)``: the pre-output ``(B, 1, H)`` (``tanh`` readout, ``h~_t`` or the RNN
        output), the next state and the attention ``(B, 1, S)`` or None."""
        weights, feed = None, None
        if self.bahdanau:
            top = state.hidden[0] if self.cell == "lstm" else state.hidden  # (B, L, H)
            context, weights = self._attend(top[:, -1:], memory, state.step, need_weights)
            out, hidden = self._rnn(torch.cat([emb, context], -1), state.hidden)
            pre = torch.tanh(self.readout(torch.cat([out, context, emb], -1)))  # (B, 1, H)
        else:
            x = torch.cat([emb, state.feed.unsqueeze(1)], -1) if self.input_feeding else emb
            out, hidden = self._rnn(x, state.hidden)  # (B, 1, H)
            pre = out
            if self.attention is not None:
                context, weights = self._attend(out, memory, state.step, need_weights)
                pre = torch.tanh(self.readout(torch.cat([context, out], -1)))  # h~_t
                feed = pre.squeeze(1) if self.input_feeding else None
        return pre, RNNState(hidden, feed, state.step + 1), weights

    def decode_step(
        self, memory: Memory, state: RNNState, prev: Tensor, need_weights: bool = False
    ) -> StepOutput:
        emb = self.dropout(self.embed(prev)).unsqueeze(1)  # (B, 1, E)
        pre, state, weights = self._advance(memory, state, emb, need_weights)
        logits = self.output(self.dropout(pre.squeeze(1)))  # (B, 1, H) -> (B, V), no copy
        attention = {"cross": weights} if need_weights and weights is not None else {}
        return StepOutput(logits, state, attention)

    def forward(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor, need_weights: bool = False
    ) -> ModelOutput:
        """Teacher-forced logits ``(B, T, V)``. The recurrence runs step by step; the target
        embedding and the output layer, the largest product, run once over all ``T`` steps
        (one dense embedding gradient, not ``T``), which gives the same logits as
        :meth:`decode_step` step by step."""
        memory = self.encode(src, src_mask)
        state = self.init_state(memory)
        embedded = self.dropout(self.embed(tgt_in))  # (B, T, E)
        pres, weights = [], []
        for t in range(tgt_in.size(1)):
            emb = embedded[:, t : t + 1]  # (B, 1, E)
            pre, state, step_weights = self._advance(memory, state, emb, need_weights)
            pres.append(pre)  # (B, 1, H)
            if step_weights is not None and need_weights:
                weights.append(step_weights)  # (B, 1, S)
        logits = self.output(self.dropout(torch.cat(pres, 1)))  # (B, T, V)
        attention = {"cross": torch.stack(weights, 2)} if weights else {}  # (B, 1, T, S)
        return ModelOutput(logits, attention)
