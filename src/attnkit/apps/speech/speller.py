"""The speller of "Listen, Attend and Spell" (Chan, Jaitly, Le & Vinyals 2016, §3.2): an
attention decoder that emits one output token (a character or a word) per step::

    s_i = LSTM(s_{i-1}, [E y_{i-1}; c_{i-1}])            eq. (7)
    c_i = AttentionContext(s_i, h)                       eq. (6)
    P(y_i | x, y_<i) = softmax(MLP([s_i; c_i]))          eq. (8), CharacterDistribution

The state ``s_i`` is that of the top LSTM layer; the previous context ``c_{i-1}`` enters the
LSTM beside the previous token (the paper's eq. (7); Luong-style "input feeding" of the
attentional vector is *not* used); the MLP is ``W_2 tanh(W_1 [s_i; c_i] + b_1) + b_2``.

``AttentionContext`` goes through :mod:`attnkit.attention`, replacing the paper's dot product
of MLP features (eqs. (9)-(11)) with one of:

- ``"location"``: :class:`~attnkit.attention.LocationAwareAttention` (Chorowski et al. 2015,
  eqs. (5)-(9)): ``e_{i,u} = w^T tanh(W s_i + V h_u + U (F * alpha_{i-1})_u + b)``. The query
  is ``s_i`` (LAS's order: the state after this step's LSTM) where Chorowski et al. write
  ``s_{i-1}``; ``alpha_0`` is uniform over the utterance's annotations.
- ``"content"``: :class:`~attnkit.attention.AdditiveAttention` (Bahdanau et al. 2015, eq. (6)),
  ``e_{i,u} = w^T tanh(W s_i + V h_u)``, blind to where it attended before.

Both carry ``alpha_{i-1}`` in the state (content attention only to record it), ``c_0 = 0``
and ``s_0 = 0``. Teacher forcing runs the same step function over the true tokens, so it
gives the logits and weights of step-by-step decoding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.attention import AdditiveAttention, LocationAwareAttention
from attnkit.modules.seq2seq import Memory

ATTENTIONS = ("location", "content")


@dataclass
class SpellerState:
    """Decoder state, batch first (so beam search reorders it row by row): LSTM ``h``, ``c``
    ``(B, L, H)`` per layer, the previous context ``c_{i-1}`` ``(B, D)`` and weights
    ``alpha_{i-1}`` ``(B, T')``."""

    h: Tensor
    c: Tensor
    context: Tensor
    weights: Tensor


class Speller(nn.Module):
    """See the module docstring. ``d_annotation``: the listener's width ``D``."""

    def __init__(
        self,
        vocab: int,
        d_annotation: int,
        *,
        d_embed: int,
        d_hidden: int,
        layers: int = 1,
        d_attention: int,
        attention: str = "location",
        conv_channels: int = 10,
        conv_width: int = 15,
        dropout: float = 0.0,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        if attention == "location":
            self.attention: nn.Module = LocationAwareAttention(
                d_hidden, d_annotation, d_attention, filters=conv_channels, width=conv_width
            )
        elif attention == "content":
            self.attention = AdditiveAttention(d_hidden, d_annotation, d_attention)
        else:
            raise ValueError(f"unknown attention {attention!r}; choose one of {ATTENTIONS}")
        self.location = attention == "location"
        self.embed = nn.Embedding(vocab, d_embed, padding_idx=pad_id)
        widths = [d_embed + d_annotation] + [d_hidden] * (layers - 1)
        self.cells = nn.ModuleList(nn.LSTMCell(w, d_hidden) for w in widths)
        self.distribution = nn.Sequential(  # CharacterDistribution, eq. (8)
            nn.Linear(d_hidden + d_annotation, d_hidden), nn.Tanh(), nn.Linear(d_hidden, vocab)
        )
        self.dropout = nn.Dropout(dropout)

    def prepare_key(self, states: Tensor) -> Tensor:
        """``V h_u`` ``(B, T', A)`` from ``states (B, T', D)``, once per utterance."""
        return self.attention.prepare_key(states)

    def initial(self, memory: Memory) -> SpellerState:
        """``s_0 = 0``, ``c_0 = 0``, ``alpha_0`` uniform over the real annotations."""
        states = memory.states  # (B, T', D)
        b, layers, width = states.size(0), len(self.cells), self.cells[0].hidden_size
        h = states.new_zeros(b, layers, width)  # (B, L, H)
        weights = LocationAwareAttention.initial_weights(memory.mask, dtype=states.dtype)
        return SpellerState(h, torch.zeros_like(h), states.new_zeros(b, states.size(-1)), weights)

    def step(
        self, memory: Memory, state: SpellerState, prev: Tensor
    ) -> tuple[Tensor, SpellerState]:
        """Feed ``prev (B,)``: logits ``(B, V)`` and the new state (its ``weights`` are
        ``alpha_i (B, T')``)."""
        features, state = self._recur(memory, state, self.dropout(self.embed(prev)))
        return self.distribution(self.dropout(features)), state  # (B, V)

    def teacher_forced(self, memory: Memory, tgt_in: Tensor) -> tuple[Tensor, Tensor]:
        """Every step fed the true previous token ``tgt_in (B, T)``: logits ``(B, T, V)``
        (the MLP runs once over all steps) and weights ``(B, 1, T, T')``."""
        state = self.initial(memory)
        embedded = self.dropout(self.embed(tgt_in))  # (B, T, E)
        features, weights = [], []
        for t in range(tgt_in.size(1)):
            f, state = self._recur(memory, state, embedded[:, t])
            features.append(f)  # (B, H + D)
            weights.append(state.weights)  # (B, T')
        logits = self.distribution(self.dropout(torch.stack(features, 1)))  # (B, T, V)
        return logits, torch.stack(weights, 1).unsqueeze(1)  # (B, T, T') -> (B, 1, T, T')

    def _recur(
        self, memory: Memory, state: SpellerState, embedded: Tensor
    ) -> tuple[Tensor, SpellerState]:
        """Eqs. (7) and (6) from ``embedded`` ``E y_{i-1}`` ``(B, E)``: ``[s_i; c_i]``
        ``(B, H + D)`` and the new state."""
        x, hs, cs = torch.cat([embedded, state.context], -1), [], []  # (B, E + D)
        for layer, cell in enumerate(self.cells):
            h, c = cell(x, (state.h[:, layer], state.c[:, layer]))  # (B, H)
            hs.append(h)
            cs.append(c)
            x = self.dropout(h) if layer + 1 < len(self.cells) else h
        context, weights = self._attend(memory, x, state.weights)  # (B, D), (B, T')
        new = SpellerState(torch.stack(hs, 1), torch.stack(cs, 1), context, weights)
        return torch.cat([x, context], -1), new  # (B, H + D)

    def _attend(self, memory: Memory, query: Tensor, previous: Tensor) -> tuple[Tensor, Tensor]:
        """``c_i (B, D)`` and ``alpha_i (B, T')`` for ``query`` ``s_i`` ``(B, H)``."""
        if self.location:
            out = self.attention(
                query,
                memory.states,
                mask=memory.mask,
                previous=previous,
                prepared_key=memory.keys,
            )
            return out.context, out.weights  # (B, D), (B, T')
        out = self.attention(
            query[:, None, :],
            memory.states,
            mask=memory.mask[:, None, :],
            need_weights=True,
            prepared_key=memory.keys,
        )
        return out.context.squeeze(1), out.weights.squeeze(1)  # (B, 1, *) -> (B, D), (B, T')
