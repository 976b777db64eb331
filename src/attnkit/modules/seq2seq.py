"""The interface every translation model implements, so decoding and training need no special cases.

A model is Embed -> Encode -> Attend -> Predict, run in two ways:

- **Teacher forcing** (training): :meth:`Seq2SeqModel.forward` takes the whole target prefix
  ``tgt_in (B, T)`` and returns logits ``(B, T, V)``.
- **Step by step** (decoding): :meth:`encode` once, :meth:`init_state` once, then
  :meth:`decode_step` per output token. The decoder state is a dataclass of tensors (or
  :class:`~attnkit.attention.KVCache`) whose **first axis is the batch**, so beam search can
  reorder any model's state with :func:`reorder_state` without knowing what is inside.

Attention is returned, never stored: every step returns a dict ``{name: weights}`` with
weights ``(B, H, S)`` for that step (``H = 1`` for the recurrent models); :meth:`forward`
returns ``{name: (B, H, T, S)}`` when asked. Names are ``"cross"`` for RNN attention and
``"layer{l}.self"`` / ``"layer{l}.cross"`` for the Transformer: a name ending in ``"self"`` is
decoder self-attention (over the output so far), any other name attends over the source.
:meth:`forward` of the Transformer also returns the encoder's self-attention as
``"encoder.layer{l}"`` ``(B, H, S, S)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn


@dataclass
class Memory:
    """The encoder's output: what the decoder attends to.

    Attributes:
        states: ``(B, S, D_enc)`` encoder states (annotations ``h_j``).
        mask: ``(B, S)`` bool, True at real source tokens.
        final: ``(B, L, D_dec)`` an initial decoder state derived from the encoder (the
            "bridge"), or None. For the no-attention baseline this is all the decoder sees.
        keys: the key-side part of a learned attention score (``U_a h_j`` for Bahdanau,
            ``W_a h_s`` for Luong general), computed once by ``encode`` and reused at every
            decoding step; None when the model has none.
    """

    states: Tensor
    mask: Tensor
    final: Tensor | tuple[Tensor, Tensor] | None = None
    keys: Tensor | None = None


@dataclass
class StepOutput:
    """One decoding step: ``logits (B, V)``, the new state and this step's attention."""

    logits: Tensor
    state: object
    attention: dict[str, Tensor] = field(default_factory=dict)


@dataclass
class ModelOutput:
    """Teacher-forced output: ``logits (B, T, V)`` and, when asked, attention per name."""

    logits: Tensor
    attention: dict[str, Tensor] = field(default_factory=dict)


class Seq2SeqModel(nn.Module):
    """Base class of encoder-decoder models. Subclasses implement the four methods below."""

    pad_id: int = 0

    def encode(self, src: Tensor, src_mask: Tensor) -> Memory:
        """``src (B, S)`` token ids, ``src_mask (B, S)`` True at real tokens."""
        raise NotImplementedError

    def init_state(self, memory: Memory) -> object:
        """The decoder state before the first step (batch-first tensors)."""
        raise NotImplementedError

    def decode_step(
        self, memory: Memory, state: object, prev: Tensor, need_weights: bool = False
    ) -> StepOutput:
        """Feed ``prev (B,)`` (the previous output token, BOS at first) and predict the next."""
        raise NotImplementedError

    def forward(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor, need_weights: bool = False
    ) -> ModelOutput:
        """Teacher forcing: ``tgt_in (B, T)`` starts with BOS; returns logits ``(B, T, V)``."""
        raise NotImplementedError

    def encoder_attention(self, src: Tensor, src_mask: Tensor) -> dict[str, Tensor]:
        """The encoder's own self-attention ``{"encoder.layer{l}": (B, H, S, S)}``, recorded
        beside a decoded sentence's attention; empty for encoders without attention (RNNs)."""
        return {}


def reorder_state(state, index: Tensor):
    """Select batch rows ``index`` from every tensor in ``state`` (beam search, batch pruning).

    Works on tensors, None, tuples/lists/dicts and dataclasses of those, recursively; every
    tensor's first axis must be the batch.
    """
    if state is None:
        return None
    if isinstance(state, Tensor):
        return state.index_select(0, index)
    if isinstance(state, tuple | list):
        return type(state)(reorder_state(s, index) for s in state)
    if isinstance(state, dict):
        return {k: reorder_state(v, index) for k, v in state.items()}
    if dataclasses.is_dataclass(state):
        changes = {
            f.name: reorder_state(getattr(state, f.name), index) for f in dataclasses.fields(state)
        }
        return dataclasses.replace(state, **changes)
    raise TypeError(f"cannot reorder decoder state of type {type(state).__name__}")


def repeat_memory(memory: Memory, times: int) -> Memory:
    """Repeat each sentence's memory ``times`` times in a row: batch ``B`` -> ``B * times``."""
    index = torch.arange(memory.states.size(0), device=memory.states.device)
    return reorder_state(memory, index.repeat_interleave(times))
