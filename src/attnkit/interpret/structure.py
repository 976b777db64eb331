"""One structure for recorded attention, and converters into it.

**Layers**: the weights of one example and one attention stack are a list with one tensor
``(H, Tq, Tk)`` per layer, layer 0 (nearest the input) first; rows are queries, columns keys,
each row sums to 1 over its real keys. This is what :func:`~attnkit.interpret.heatmap.
plot_overview`, :func:`~attnkit.interpret.rollout.attention_rollout` and
:func:`~attnkit.interpret.rollout.attention_flow` take.

**AttentionRecord**: the stacks of one example by name, with their row and column labels.
The names follow attnkit's models (:mod:`attnkit.modules.seq2seq`), and Hugging Face outputs are
mapped onto them:

- ``"self"``: the self-attention of the stack that makes the output: an encoder-only model's
  layers (BERT, attnkit's :class:`~attnkit.modules.bert.BertEncoder`, Hugging Face
  ``attentions``), or a translation model's decoder (``"layer{l}.self"``, Hugging Face
  ``decoder_attentions``);
- ``"cross"``: decoder over source (``"layer{l}.cross"``; the recurrent models' single
  ``"cross"`` is a one-layer stack; Hugging Face ``cross_attentions``);
- ``"encoder"``: a translation model's encoder self-attention (``"encoder.layer{l}"``,
  Hugging Face ``encoder_attentions``).

Converters: :func:`from_hf` (a Hugging Face ``output_attentions`` tuple of ``L`` tensors
``(B, H, Tq, Tk)``), :func:`from_hf_output` (a whole Hugging Face output),
:func:`from_model_output` (attnkit's teacher-forced ``{name: (B, H, Tq, Tk)}`` dict or a
:class:`~attnkit.modules.bert.BertOutput`), :func:`as_record` (an application's result that
provides ``attention_record()``: :class:`AttentionSource`) and :func:`from_saved` (files of
:mod:`attnkit.interpret.record`). All return CPU float32 tensors detached from the graph.

The core names no application: an application fills an :class:`AttentionRecord` (its labels
included) from its own results, and every view, heatmap, rollout and alignment takes that.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import torch
from torch import Tensor

Layers = list[Tensor]  # one (H, Tq, Tk) per layer, layer 0 first
_LAYER_PART = re.compile(r"layer(\d+)")
EOS_LABEL = "</s>"  # the row label of a decoder's end-of-sequence step (sentencepiece's symbol)
HF_STACKS = {
    "attentions": "self",
    "encoder_attentions": "encoder",
    "decoder_attentions": "self",
    "cross_attentions": "cross",
}

# transformers' default attention (sdpa) returns attentions=() even with output_attentions=True
NO_WEIGHTS = (
    "the output holds no attention weights: transformers' default attention (sdpa) returns "
    "none even with output_attentions=True; use attnkit.hf.record(model, inputs), which "
    'runs eager attention for the call, or load the model with attn_implementation="eager"'
)
GENERATED = (
    "this is a generate() output (one tuple of layers per step): stitch it with "
    "attnkit.hf.record(model, output)[i], one record per generated sequence"
)


@dataclass
class AttentionRecord:
    """The attention of one example: ``stacks[name]`` is :data:`Layers` (``(H, Tq, Tk)`` per
    layer) and ``labels[name]``, where known, is ``(query labels, key labels)``."""

    stacks: dict[str, Layers]
    labels: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, layers in self.stacks.items():
            _check_layers(layers, name)
        for name, (q, k) in self.labels.items():
            shape = self.stacks[name][0].shape[-2:]
            if shape != (len(q), len(k)):
                raise ValueError(
                    f"stack {name!r}: weights (Tq, Tk) = {tuple(shape)} but {len(q)} query and "
                    f"{len(k)} key labels"
                )

    def __getitem__(self, name: str) -> Layers:
        if name not in self.stacks:
            raise KeyError(f"no attention stack {name!r}; this record has {list(self.stacks)}")
        return self.stacks[name]

    @property
    def names(self) -> list[str]:
        return list(self.stacks)


def _check_layers(layers: Sequence[Tensor], name: str) -> None:
    if not layers:
        raise ValueError(f"stack {name!r} has no layers")
    first = layers[0].shape
    for i, w in enumerate(layers):
        if w.dim() != 3 or w.shape[0] != first[0]:
            raise ValueError(
                f"stack {name!r}, layer {i}: expected (H, Tq, Tk) with H = {first[0]}, "
                f"got shape {tuple(w.shape)}"
            )


def _clean(w: Tensor) -> Tensor:
    return w.detach().to("cpu", torch.float32)


def _trim(w: Tensor, length: int | tuple[int | None, int | None] | None) -> Tensor:
    """Keep the first ``length`` queries and keys (or ``(queries, keys)``): right padding."""
    if length is None:
        return w
    q, k = (length, length) if isinstance(length, int) else length
    return w[..., :q, :k]


def from_hf(
    attentions: Sequence[Tensor],
    batch_index: int = 0,
    length: int | tuple[int, int] | None = None,
) -> Layers:
    """Hugging Face ``output_attentions`` (``L`` tensors ``(B, H, Tq, Tk)``) -> :data:`Layers`
    of example ``batch_index``: ``L`` tensors ``(H, Tq, Tk)``.

    Works alike for ``attentions``, ``encoder_attentions``, ``decoder_attentions`` and
    ``cross_attentions`` (``Tq`` decoder, ``Tk`` encoder positions). ``length`` (or ``(Tq, Tk)``)
    crops right padding, e.g. ``int(batch["attention_mask"][i].sum())``.
    """
    if attentions is None or len(attentions) == 0:
        raise ValueError(NO_WEIGHTS)
    layers = []
    for i, w in enumerate(attentions):
        if isinstance(w, tuple | list) and w and all(isinstance(x, Tensor) for x in w):
            raise ValueError(GENERATED)
        if not isinstance(w, Tensor) or w.dim() != 4:
            shape = tuple(w.shape) if isinstance(w, Tensor) else type(w).__name__
            raise ValueError(f"layer {i}: expected a tensor (B, H, Tq, Tk), got {shape}")
        if not -w.shape[0] <= batch_index < w.shape[0]:
            raise IndexError(f"batch_index {batch_index} out of range for batch size {w.shape[0]}")
        layers.append(_trim(_clean(w[batch_index]), length))  # (H, Tq, Tk)
    _check_layers(layers, "attentions")
    return layers


def from_hf_output(output, batch_index: int = 0, labels=None) -> AttentionRecord:
    """Every attention tuple of a Hugging Face model output, as an :class:`AttentionRecord`
    (``"self"`` for encoder-only models; ``"encoder"``, ``"self"`` (the decoder's) and
    ``"cross"`` for encoder-decoders). ``labels``: optional ``{name: (query labels, key
    labels)}``."""
    stacks = {
        ours: from_hf(getattr(output, theirs), batch_index)
        for theirs, ours in HF_STACKS.items()
        if getattr(output, theirs, None)  # absent, None or () (e.g. no cross-attention)
    }
    if hasattr(output, "sequences"):
        raise ValueError(GENERATED)
    if not stacks:
        raise ValueError(NO_WEIGHTS)
    return AttentionRecord(stacks, dict(labels or {}))


def split_name(name: str) -> tuple[str, int]:
    """``"layer2.cross"`` -> ``("cross", 2)``, ``"encoder.layer0"`` -> ``("encoder", 0)``,
    ``"cross"`` -> ``("cross", 0)``."""
    parts = name.split(".")
    found = [i for i, p in enumerate(parts) if _LAYER_PART.fullmatch(p)]
    if not found:
        return name, 0
    layer = int(parts.pop(found[0])[len("layer") :])
    return ".".join(parts) or "self", layer


def group_layers(named: Mapping[str, Tensor]) -> dict[str, Layers]:
    """attnkit's named weights ``(H, Tq, Tk)`` -> ``{stack: [layer 0, layer 1, ...]}``:
    ``"layer{l}.self"`` / ``"layer{l}.cross"`` / ``"encoder.layer{l}"`` go to the stacks
    ``"self"`` / ``"cross"`` / ``"encoder"``; a name without a layer number (the recurrent
    models' ``"cross"``) is a one-layer stack."""
    grouped: dict[str, dict[int, Tensor]] = {}
    for name, w in named.items():
        stack, layer = split_name(name)
        if layer in grouped.setdefault(stack, {}):
            raise ValueError(f"attention {name!r} given twice for stack {stack!r}")
        grouped[stack][layer] = _clean(w)
    for stack, layers in grouped.items():
        if sorted(layers) != list(range(len(layers))):
            raise ValueError(f"stack {stack!r} has layers {sorted(layers)}; expected 0..L-1")
    return {stack: [layers[i] for i in range(len(layers))] for stack, layers in grouped.items()}


def from_model_output(
    output, batch_index: int = 0, length: int | tuple[int, int] | None = None
) -> AttentionRecord:
    """attnkit's recorded weights of one example of a batch.

    ``output`` is a teacher-forced model's attention dict ``{"encoder.layer{l}": (B, H, S, S),
    "layer{l}.self": (B, H, T, T), "layer{l}.cross": (B, H, T, S)}``, an object with such an
    ``attention`` dict (:class:`~attnkit.modules.seq2seq.ModelOutput`), or an object whose
    ``attentions`` is a tuple ``(B, H, T, T)`` per layer
    (:class:`~attnkit.modules.bert.BertOutput`, stack ``"self"``).
    ``length`` crops right padding: ``n`` keeps ``n`` queries and keys everywhere (an encoder);
    ``(T, S)`` keeps ``T`` output and ``S`` source positions: ``(T, T)`` of ``"self"``,
    ``(T, S)`` of ``"cross"``, ``(S, S)`` of ``"encoder"``.
    """
    if getattr(output, "attentions", None) is not None:
        return AttentionRecord({"self": from_hf(output.attentions, batch_index, length)})
    named = getattr(output, "attention", output)
    if not isinstance(named, Mapping) or not named:
        raise ValueError("no recorded attention: run the model with need_weights=True")
    for name, w in named.items():
        if w.dim() != 4:
            raise ValueError(f"{name!r}: expected (B, H, Tq, Tk), got {tuple(w.shape)}")
    stacks = group_layers({name: w[batch_index] for name, w in named.items()})  # (H, Tq, Tk)
    t, s = length if isinstance(length, tuple) else (length, length)  # None: keep all
    sizes = {"self": (t, t), "cross": (t, s), "encoder": (s, s)}
    return AttentionRecord(
        {k: [_trim(w, sizes.get(k, (t, s))) for w in v] for k, v in stacks.items()}
    )


@runtime_checkable
class AttentionSource(Protocol):
    """An application's result that carries recorded attention (a decoded sentence, a
    classified text, ...): :meth:`attention_record` gives hypothesis ``hypothesis`` (0: the
    best, or the only one) as an :class:`AttentionRecord`, labelled. Views, heatmaps,
    :func:`~attnkit.interpret.alignments.word_attention` and :func:`as_record` take such a
    result as it is."""

    def attention_record(self, hypothesis: int = 0) -> AttentionRecord: ...


def as_record(attention, hypothesis: int = 0):
    """An application's result as an :class:`AttentionRecord`; anything else unchanged.

    Accepts an :class:`AttentionSource` (an application's result that provides
    ``attention_record()``), a list holding one (what an API returns for one input), and one
    hypothesis' dict of named weights ``{name: (H, Tq, Tk)}`` (attnkit's names, see
    :func:`group_layers`). Views and heatmaps call it first, so such a result goes straight
    into them.
    """
    if isinstance(attention, list | tuple) and attention:
        if all(isinstance(a, AttentionSource) for a in attention):
            if len(attention) != 1:
                raise ValueError(
                    f"{len(attention)} results given; a view shows one: pass results[i]"
                )
            attention = attention[0]
    if isinstance(attention, AttentionSource):
        return attention.attention_record(hypothesis)
    named = isinstance(attention, Mapping) and not any(hasattr(attention, a) for a in HF_STACKS)
    if named and attention and all(isinstance(w, Tensor) for w in attention.values()):
        if not all(w.dim() == 3 for w in attention.values()):
            raise ValueError(
                "a dict of attention must map names to (H, Tq, Tk) tensors, as one "
                "hypothesis' recorded weights do"
            )
        return AttentionRecord(group_layers(attention))
    return attention  # a Hugging Face output, a record, tensors: the caller's forms


def from_saved(directory, index: int, hypothesis: int = 0) -> AttentionRecord:
    """An example saved by :func:`attnkit.interpret.record.save_attention`, labelled."""
    from attnkit.interpret.record import load_attention

    return load_attention(directory, index, hypothesis)[0]
