"""The pointer-generator network with coverage (See, Liu & Manning 2017, "Get To The Point:
Summarization with Pointer-Generator Networks", ACL), as a
:class:`~attnkit.modules.seq2seq.Seq2SeqModel`, so :mod:`attnkit.decoding`'s greedy and beam
search decode it.

- **Embed**: one word table shared by encoder and decoder (§2.1).
- **Encode**: a bidirectional LSTM, annotations ``h_i (B, S, 2H)``; its final states make the
  decoder's first ``(h, c)`` (:class:`~attnkit.modules.rnn.RNNEncoder`'s bridge).
- **Attend**: :class:`~attnkit.attention.CoverageAttention`, eq. (11) (without ``w_c c_i`` when
  ``coverage: false``: Bahdanau's eq. (1)) from the decoder state ``s_t = [h_t; c_t]``.
- **Predict**: ``P_vocab = softmax(V'(V[s_t; h*_t] + b) + b')`` (eq. 4, with ``s_t`` the LSTM
  output ``h_t``); with ``copy: true`` the generation probability ``p_gen`` (eq. 8) mixes it
  with the attention as a copy distribution over the *extended* vocabulary (eq. 9,
  :func:`~attnkit.attention.pointer_mixture`).

**Source ids are extended ids**: a source word outside the vocabulary has id ``V + k`` (its
``k``-th distinct unknown word, :func:`~attnkit.apps.summarization.data.extend`); the model
embeds every id ``>= V`` as ``<unk>`` and copies by the extended id, so the decoders run
unchanged. The output width is ``V + S`` (``S`` the batch's source length, at least the number
of distinct unknown words); :meth:`decode_step` returns log-probabilities as its ``logits``.
A decoder input ``>= V`` (a copied unknown word) is embedded as ``<unk>`` (See et al.'s code).

The decoder's input is ``x_t = W_x [E y_{t-1}; h*_{t-1}] + b_x`` (input feeding, as See et al.'s
code), the first context zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.attention import CoverageAttention, GenerationGate, coverage_loss, pointer_mixture
from attnkit.config import Checked, bounded
from attnkit.modules.rnn import RNNEncoder
from attnkit.modules.seq2seq import Memory, ModelOutput, Seq2SeqModel, StepOutput

TINY = 1e-12  # added before the log of the mixture (See et al.'s code: none; their dist > 0)


@dataclass
class PointerGeneratorConfig(Checked):
    """The model's shape (See et al.'s CNN/Daily Mail sizes in brackets) and its two
    mechanisms: ``copy`` (the pointer, §2.2) and ``coverage`` (§2.3)."""

    embed_dim: int = bounded(128, ge=1)  # word embeddings [128]
    hidden_dim: int = bounded(256, ge=1)  # encoder LSTM per direction, and the decoder [256]
    attention_dim: int | None = bounded(None, ge=1)  # the score's hidden width [None: 2H]
    dropout: float = bounded(0.0, ge=0, lt=1)  # on the embeddings [none]
    copy: bool = True  # the pointer: p_gen mixes generation with copying (eq. 8-9)
    coverage: bool = True  # w_c c_i in the attention score (eq. 11) and its loss (eq. 12)


@dataclass
class PGMemory(Memory):
    """:class:`Memory` plus ``source (B, S)``, the extended ids the pointer copies."""

    source: Tensor | None = None


@dataclass
class PGState:
    """The decoder state: LSTM ``h, c (B, H)``, the last context ``h*_{t-1} (B, 2H)`` and the
    coverage ``c^t (B, S)`` (the sum of the attention of the steps before, eq. 10)."""

    h: Tensor
    c: Tensor
    context: Tensor
    coverage: Tensor


@dataclass
class Step:
    """What one step computes before the output layer: the new state, ``x_t (B, E)``, the
    attention ``a^t (B, S)`` and the coverage it was scored with, ``c^t (B, S)``."""

    state: PGState
    x: Tensor
    weights: Tensor
    coverage: Tensor


def _stack(items, name: str) -> Tensor:
    """Field ``name`` of every step, stacked on a time axis: ``(B, ...)`` -> ``(B, T, ...)``."""
    return torch.stack([getattr(item, name) for item in items], 1)


class PointerGenerator(Seq2SeqModel):
    """See et al. 2017's model over a vocabulary of ``vocab_size`` words (``<pad>`` 0,
    ``<unk>`` ``unk_id``); see the module docstring."""

    def __init__(
        self, cfg: PointerGeneratorConfig, vocab_size: int, pad_id: int = 0, unk_id: int = 1
    ) -> None:
        super().__init__()
        self.config, self.vocab_size = cfg, vocab_size
        self.pad_id, self.unk_id = pad_id, unk_id
        e, h = cfg.embed_dim, cfg.hidden_dim
        self.encoder = RNNEncoder(
            vocab_size, e, h, cell="lstm", dropout=cfg.dropout, decoder_dim=h, pad_id=pad_id
        )
        self.embed = self.encoder.embed  # shared by encoder and decoder (§2.1)
        self.input = nn.Linear(e + 2 * h, e)  # W_x: [E y_{t-1}; h*_{t-1}] -> x_t
        self.cell = nn.LSTMCell(e, h)
        d_att = cfg.attention_dim or 2 * h
        self.attention = CoverageAttention(2 * h, 2 * h, d_att, coverage=cfg.coverage)
        self.hidden_out = nn.Linear(3 * h, h)  # V, b of eq. (4)
        self.out = nn.Linear(h, vocab_size)  # V', b'
        self.gate = GenerationGate(2 * h, 2 * h, e) if cfg.copy else None  # eq. (8)

    def words(self, ids: Tensor) -> Tensor:
        """Embeddings of extended ids: every id ``>= V`` reads as ``<unk>``."""
        return self.embed(ids.masked_fill(ids >= self.vocab_size, self.unk_id))

    def encode(self, src: Tensor, src_mask: Tensor) -> PGMemory:
        """``src (B, S)`` extended ids, ``src_mask (B, S)`` True at real words."""
        inside = src.masked_fill(src >= self.vocab_size, self.unk_id)  # (B, S) in-vocabulary
        states, final = self.encoder(inside, src_mask)  # (B, S, 2H); (h, c) each (B, 1, H)
        keys = self.attention.prepare_key(states)  # (B, S, 2H): W_h h_i, once per source
        return PGMemory(states, src_mask, final, keys, source=src)

    def init_state(self, memory: PGMemory) -> PGState:
        h, c = (part[:, 0] for part in memory.final)  # (B, H) each
        b, s, d = memory.states.shape
        context = memory.states.new_zeros(b, d)  # (B, 2H): h*_0 = 0
        return PGState(h, c, context, memory.states.new_zeros(b, s))  # c^0 = 0 (eq. 10)

    def width(self, memory: PGMemory) -> int:
        """The output width: ``V + S`` with the pointer, else ``V``."""
        return self.vocab_size + (memory.states.size(1) if self.config.copy else 0)

    def advance(self, memory: PGMemory, state: PGState, prev: Tensor) -> Step:
        """The recurrent part of a step: input feeding, the LSTM, then attention with the
        coverage so far, which then grows by this step's weights (eq. 10)."""
        x = self.input(torch.cat([self.words(prev), state.context], -1))  # (B, E)
        h, c = self.cell(x, (state.h, state.c))  # (B, H) each
        coverage = state.coverage if self.config.coverage else None
        query = torch.cat([h, c], -1)  # (B, 2H): s_t
        out = self.attention(
            query, memory.states, mask=memory.mask, coverage=coverage, prepared_key=memory.keys
        )  # context (B, 2H), weights (B, S)
        grown = state.coverage + out.weights  # (B, S): c^{t+1}
        return Step(PGState(h, c, out.context, grown), x, out.weights, state.coverage)

    def distribution(self, memory: PGMemory, h, c, context, x, weights):
        """Log-probabilities of the next word ``(..., width)`` and ``p_gen (...)`` (None
        without the pointer), for steps whose tensors have the leading shape ``(B, ...)``:
        eq. (4), then with the pointer eqs. (8)-(9)."""
        hidden = self.hidden_out(torch.cat([h, context], -1))  # (..., H)
        logits = self.out(hidden)  # (..., V)
        wide = torch.promote_types(logits.dtype, torch.float32)  # softmax at fp32 or wider
        if self.gate is None:
            return F.log_softmax(logits.to(wide), -1), None
        p_gen = self.gate(context, torch.cat([h, c], -1), x)  # (...,)
        source = memory.source  # (B, S) extended ids
        if weights.dim() == 3:  # (B, T, S): every step of a batch at once
            source = source.unsqueeze(1).expand(-1, weights.size(1), -1)  # (B, T, S)
        p_vocab = F.softmax(logits.to(wide), -1)  # (..., V)
        n_extended = memory.states.size(1)
        mixed = pointer_mixture(p_vocab, weights.to(wide), source, p_gen.to(wide), n_extended)
        return torch.log(mixed + TINY), p_gen  # (..., V + S), (...)

    def decode_step(
        self, memory: PGMemory, state: PGState, prev: Tensor, need_weights: bool = False
    ) -> StepOutput:
        """One output word: log-probabilities ``(B, width)`` (as ``logits``), the new state,
        and ``{"cross": a^t (B, 1, S)}``."""
        step = self.advance(memory, state, prev)
        s = step.state
        logp, _ = self.distribution(memory, s.h, s.c, s.context, step.x, step.weights)
        return StepOutput(logp, s, {"cross": step.weights.unsqueeze(1)})

    def forward(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor, need_weights: bool = False
    ) -> ModelOutput:
        """Teacher forcing over ``tgt_in (B, T)`` (BOS first, extended ids): log-probabilities
        ``(B, T, width)`` as ``logits``; ``attention``: ``cross (B, 1, T, S)``, ``coverage``
        ``(B, 1, T, S)`` (each step's ``c^t``, before its own weights) and, with the pointer,
        ``p_gen (B, T)``. The recurrence runs step by step; the output layer once for all."""
        memory = self.encode(src, src_mask)
        state, steps = self.init_state(memory), []
        for t in range(tgt_in.size(1)):
            steps.append(self.advance(memory, state, tgt_in[:, t]))
            state = steps[-1].state

        states = [step.state for step in steps]
        h, c, context = (_stack(states, name) for name in ("h", "c", "context"))
        x, weights, coverage = (_stack(steps, name) for name in ("x", "weights", "coverage"))
        logp, p_gen = self.distribution(memory, h, c, context, x, weights)  # (B, T, width)
        attention = {"cross": weights.unsqueeze(1), "coverage": coverage.unsqueeze(1)}
        if p_gen is not None:
            attention["p_gen"] = p_gen  # (B, T)
        return ModelOutput(logp, attention)

    def losses(self, out: ModelOutput, tgt_out: Tensor) -> tuple[Tensor, Tensor]:
        """Summed over the real target words of ``tgt_out (B, T)`` (extended ids, padding
        ``pad_id``): the negative log-likelihood (eq. 6-7) and the coverage loss (eq. 12, 0
        without coverage); the caller weighs the second by ``lambda`` (eq. 13)."""
        real = tgt_out != self.pad_id  # (B, T)
        nll = -out.logits.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
        nll = (nll * real).sum()
        if not self.config.coverage:
            return nll, nll.new_zeros(())
        weights = out.attention["cross"][:, 0]  # (B, T, S)
        coverage = out.attention["coverage"][:, 0]  # (B, T, S)
        per_step = coverage_loss(weights, coverage)  # (B, T)
        return nll, (per_step * real).sum()
