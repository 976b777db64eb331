"""The interface every translation model implements, so decoding and training need no special cases.

A model is Embed -> Encode -> Attend -> Predict, run in two ways:

- **Teacher forcing** (training): :meth:`Seq2SeqModel.forward` takes the whole target prefix
  ``tgt_in (B, T)`` and returns logits ``(B, T, V)``.
- **Step by step** (decoding): :meth:`encode` once, :meth:`init_state` once, then
  :meth:`decode_step` per output token. The decoder state is a dataclass of tensors (or
  :class:`~attnkit.attention.KVCache`) whose **first axis is the batch**, so beam search can
  reorder any model's state with :func:`reorder_state` without knowing what is inside.
  A dataclass field declared with :func:`shared_by_beams` holds one row per *sentence*
  instead (the Transformer's cross-attention keys/values, the same for all of a sentence's
  beams): beam search repeats and reorders every other tensor per beam, and selects those
  only when finished sentences leave the batch.

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


_SHARED = "shared_by_beams"
_SAME = object()  # reorder_state's default: shared fields follow ``index`` too


def shared_by_beams():
    """A dataclass field of a decoder state that holds one row per sentence, shared by the
    sentence's beams (e.g. cross-attention keys/values projected once from the memory).
    Models that read it must serve ``B * K`` beam rows from its ``B`` rows, each sentence's
    ``K`` beams consecutive (as :class:`~attnkit.attention.MultiHeadAttention` does with a
    static cache)."""
    return field(metadata={_SHARED: True})


def reorder_state(state, index: Tensor, sentences: Tensor | None = _SAME):
    """Select batch rows ``index`` from every tensor in ``state`` (beam search, batch pruning).

    Works on tensors, None, tuples/lists/dicts and dataclasses of those, recursively, and on
    objects with a ``select_rows(index)`` method (a buffered
    :class:`~attnkit.attention.KVCache` copies only its filled positions); every tensor's
    first axis must be the batch. Fields declared :func:`shared_by_beams` (and all
    they hold) select rows ``sentences`` instead; ``sentences=None`` leaves them as they
    are (the beams were reordered within their sentences); by default they follow ``index``
    as every other tensor does (a state with one row per sentence).
    """
    return _reorder(state, index, index if sentences is _SAME else sentences, shared=False)


def _reorder(state, rows: Tensor, sentences: Tensor | None, shared: bool):
    index = sentences if shared else rows
    if state is None or index is None:
        return state
    if isinstance(state, Tensor):
        return state.index_select(0, index)
    if callable(getattr(state, "select_rows", None)):  # e.g. a KVCache: its filled part only
        return state.select_rows(index)
    if isinstance(state, tuple | list):
        return type(state)(_reorder(s, rows, sentences, shared) for s in state)
    if isinstance(state, dict):
        return {k: _reorder(v, rows, sentences, shared) for k, v in state.items()}
    if dataclasses.is_dataclass(state):
        changes = {
            f.name: _reorder(
                getattr(state, f.name), rows, sentences, shared or f.metadata.get(_SHARED, False)
            )
            for f in dataclasses.fields(state)
        }
        return dataclasses.replace(state, **changes)
    raise TypeError(f"cannot reorder decoder state of type {type(state).__name__}")


def repeat_memory(memory: Memory, times: int) -> Memory:
    """Repeat each sentence's memory ``times`` times in a row: batch ``B`` -> ``B * times``."""
    index = torch.arange(memory.states.size(0), device=memory.states.device)
    return reorder_state(memory, index.repeat_interleave(times))
