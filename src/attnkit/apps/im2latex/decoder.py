"""The markup decoder of im2markup (Deng et al. 2017, §3, "Decoder"): an LSTM language model
conditioned on the annotation grid through attention, with input feeding (Luong et al. 2015,
§3.3), as in the paper::

    h_t = LSTM(h_{t-1}, [E y_{t-1}; o_{t-1}])
    alpha_t = softmax(a(h_t, V~)),    c_t = sum_{h,w} alpha_{t,hw} V~_{h,w}
    o_t = tanh(W_c [h_t; c_t]),       p(y_t | y_<t, V) = softmax(W_out o_t)

``a`` is the paper's additive score ``beta^T tanh(W_h h_t + W_v V~_{h,w})``
(:class:`~attnkit.attention.AdditiveAttention`), Luong's ``general`` score
(:class:`~attnkit.attention.MultiplicativeAttention`) or the paper's coarse-to-fine attention
(:class:`~attnkit.apps.im2latex.coarse_to_fine.CoarseToFineAttention`, §4). The first state
is predicted from the mean annotation (as Xu et al. 2015, §3.1.2, do for images).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.apps.im2latex.coarse_to_fine import BlockedGrid, CoarseToFineAttention
from attnkit.attention import AdditiveAttention, MultiplicativeAttention
from attnkit.modules.seq2seq import Memory


@dataclass
class FormulaState:
    """Decoder state, batch first: LSTM ``h (B, H)``, ``c (B, H)`` and ``feed (B, H)``,
    the previous attentional vector ``o_{t-1}``."""

    h: Tensor
    c: Tensor
    feed: Tensor


class FormulaDecoder(nn.Module):
    """See the module docstring. ``attention``: ``"additive"`` (the paper) or ``"general"``."""

    def __init__(
        self,
        vocab: int,
        d_annotation: int,
        *,
        d_embed: int,
        d_hidden: int,
        d_attention: int,
        attention: str = "additive",
        dropout: float = 0.0,
        pad_id: int = 0,
        block: Sequence[int] = (2, 2),
        coarse: str = "sparsemax",
    ) -> None:
        super().__init__()
        self.coarse_to_fine = attention == "coarse_to_fine"
        if self.coarse_to_fine:
            self.attention: nn.Module = CoarseToFineAttention(
                d_hidden, d_annotation, d_attention, block=tuple(block), coarse=coarse
            )
        elif attention == "additive":
            self.attention = AdditiveAttention(d_hidden, d_annotation, d_attention)
        elif attention == "general":
            self.attention = MultiplicativeAttention(d_hidden, d_annotation, method="general")
        else:
            raise ValueError(
                f"unknown attention {attention!r}; choose additive, general or coarse_to_fine"
            )
        self.embed = nn.Embedding(vocab, d_embed, padding_idx=pad_id)
        self.cell = nn.LSTMCell(d_embed + d_hidden, d_hidden)
        self.init_h = nn.Linear(d_annotation, d_hidden)
        self.init_c = nn.Linear(d_annotation, d_hidden)
        self.combine = nn.Linear(d_hidden + d_annotation, d_hidden)  # W_c
        self.output = nn.Linear(d_hidden, vocab)  # W_out
        self.dropout = nn.Dropout(dropout)

    def initial(self, memory: Memory) -> FormulaState:
        """``h_0, c_0 = tanh(W mean(V~))`` over the real cells; ``o_0 = 0``."""
        weights = memory.mask.float().unsqueeze(-1)  # (B, L, 1)
        mean = (memory.states * weights).sum(1) / weights.sum(1).clamp_min(1.0)  # (B, D)
        h, c = torch.tanh(self.init_h(mean)), torch.tanh(self.init_c(mean))  # (B, H)
        return FormulaState(h, c, torch.zeros_like(h))

    def step(
        self, memory: Memory, state: FormulaState, prev: Tensor, need_weights: bool
    ) -> tuple[Tensor, FormulaState, Tensor | None]:
        """Feed ``prev (B,)``: logits ``(B, V)``, the new state and ``alpha_t (B, 1, L)``
        (None unless ``need_weights``)."""
        o, state, weights = self._attend(
            memory, state, self.dropout(self.embed(prev)), need_weights
        )
        return self.output(self.dropout(o)), state, weights  # W_out o_t: (B, V)

    def teacher_forced(
        self, memory: Memory, tgt_in: Tensor, need_weights: bool
    ) -> tuple[Tensor, Tensor | None]:
        """Every step fed the true previous token: logits ``(B, T, V)`` (the output layer runs
        once over all steps, the same logits as :meth:`step`) and ``(B, 1, T, L)`` weights."""
        state = self.initial(memory)
        embedded = self.dropout(self.embed(tgt_in))  # (B, T, E)
        outs, weights = [], []
        for t in range(tgt_in.size(1)):
            o, state, w = self._attend(memory, state, embedded[:, t], need_weights)
            outs.append(o)  # (B, H)
            weights.append(w)  # (B, 1, L) or None
        logits = self.output(self.dropout(torch.stack(outs, 1)))  # (B, T, H) -> (B, T, V)
        return logits, torch.stack(weights, 2) if need_weights else None  # (B, 1, T, L)

    def _attend(
        self, memory: Memory, state: FormulaState, embedded: Tensor, need_weights: bool
    ) -> tuple[Tensor, FormulaState, Tensor | None]:
        """One step from ``embedded (B, E)``: ``o_t (B, H)``, the new state and weights."""
        h, c = self.cell(torch.cat([embedded, state.feed], -1), (state.h, state.c))  # (B, H)
        if self.coarse_to_fine:
            out = self.attention(h[:, None, :], memory.keys, need_weights)  # keys: BlockedGrid
        else:
            out = self.attention(
                h[:, None, :],
                memory.states,
                mask=memory.mask[:, None, :],
                prepared_key=memory.keys,
                need_weights=need_weights,
            )
        context = out.context.squeeze(1)  # (B, 1, D) -> (B, D)
        o = torch.tanh(self.combine(torch.cat([h, context], -1)))  # (B, H)
        return o, FormulaState(h, c, o), out.weights

    def prepare_key(self, grid: Tensor, mask: Tensor) -> Tensor | BlockedGrid:
        """The key side of the score, once per image, from ``grid (B, R, C, D)`` and ``mask
        (B, R, C)``: ``W_v V~`` ``(B, R * C, A)`` for additive, the blocks for coarse-to-fine."""
        if self.coarse_to_fine:
            return self.attention.prepare(grid, mask)
        return self.attention.prepare_key(grid.flatten(1, 2))  # (B, R * C, D) row-major
