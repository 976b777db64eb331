"""Attribution and deletion curves for a Hugging Face model, through attnkit's core.

:func:`hf_attribute` runs one example eagerly with ``output_attentions=True`` (see
:func:`attnkit.hf.eager.eager_attention`), back-propagates a target score to every attention
tensor and returns an :class:`~attnkit.interpret.attribution.Attribution`: the weights and
their gradients ``dy/dA`` as :data:`~attnkit.interpret.structure.Layers` (``(H, T, T)`` per
layer) and the importance vectors built from them (raw attention, rollout, attention x gradient
and the gradient rollout of Chefer, Gur & Wolf 2021, eqs. (5)-(6)). :func:`hf_deletion_scorer`
is the scorer of :mod:`attnkit.interpret.faithfulness`'s deletion curves, and
:func:`hf_faithfulness` runs both.

The target ``y`` is one of:

- an ``int`` ``c``: the class logit ``logits[0, c]`` of a sequence classifier (``(1, C)``
  logits); the scorer reads the class probability ``softmax(logits)[c]``;
- a pair ``(t, v)``: token ``v``'s logit at position ``t`` of a causal language model
  (``(1, T, V)`` logits); the scorer reads ``softmax(logits[0, t])[v]``;
- a callable ``target(output) -> scalar tensor``: anything else (a plain encoder's similarity
  to a reference embedding, say); the scorer reads the same value.

The model is run in eval mode (dropout off; its mode is restored) and the input embeddings'
output is made to require grad, so a frozen model (``requires_grad=False``) works too; the
gradients come from ``torch.autograd.grad``, so no parameter's ``.grad`` is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import numpy as np
import torch
from torch import Tensor

from attnkit.hf.eager import eager_attention, evaluating
from attnkit.interpret.attribution import Attribution, attribute
from attnkit.interpret.faithfulness import DeletionCurve, Scorer, compare_importances

Target = int | tuple[int, int] | Callable[[object], Tensor]
# keys a tokenizer may return that a model's forward does not take
NOT_MODEL_INPUTS = ("special_tokens_mask", "offset_mapping", "length", "overflowing_tokens")


def model_inputs(inputs: Mapping) -> dict[str, Tensor]:
    """The tensors of one example (``input_ids (1, T)``) that the model's forward takes."""
    batch = {k: v for k, v in dict(inputs).items() if k not in NOT_MODEL_INPUTS}
    ids = batch.get("input_ids")
    if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.size(0) != 1:
        shape = tuple(ids.shape) if isinstance(ids, Tensor) else type(ids).__name__
        raise ValueError(
            f"expected one example: input_ids of shape (1, T) (return_tensors='pt'), got {shape}"
        )
    if batch.get("attention_mask") is None:
        batch["attention_mask"] = torch.ones_like(ids)  # (1, T)
    return batch


def target_score(output, target: Target, probability: bool = False) -> Tensor:
    """The scalar target ``y`` of ``output`` (see the module docstring); ``probability``: the
    softmax probability instead of the logit (``int`` and ``(t, v)`` targets)."""
    if callable(target):
        value = target(output)
        if not isinstance(value, Tensor) or value.numel() != 1:
            raise ValueError("a callable target must return a scalar tensor")
        return value.reshape(())
    logits = getattr(output, "logits", None)
    if logits is None:
        raise ValueError("this model's output has no logits: pass target=callable(output)")
    if isinstance(target, tuple):
        if logits.dim() != 3:
            raise ValueError(f"target (t, v) needs logits (1, T, V), got {tuple(logits.shape)}")
        position, token = target
        row = logits[0, position]  # (V,)
        return (row.softmax(-1) if probability else row)[token]
    if logits.dim() != 2:
        raise ValueError(
            f"an int target is a class of logits (1, C); these are {tuple(logits.shape)}: "
            "for a language model pass (position, token)"
        )
    return (logits[0].softmax(-1) if probability else logits[0])[target]


@contextmanager
def embeddings_need_grad(model) -> Iterator[None]:
    """Make the input embeddings' output require grad, so that the attention weights are in
    the graph even when every parameter is frozen."""
    embeddings = model.get_input_embeddings()

    def hook(_module, _inputs, output):
        return output if output.requires_grad else output.detach().requires_grad_(True)

    handle = embeddings.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def hf_attribute(model, inputs: Mapping, target: Target) -> Attribution:
    """Weights, gradients ``dy/dA`` and importances of one example (``input_ids (1, T)``).

    ``target``: see the module docstring. Positions are those of ``input_ids`` (padding, if
    any, is kept: its keys get weight 0 and rank last). Raises
    :class:`~attnkit.hf.eager.NoWeightsError` if the model cannot run eager attention.
    """
    batch = model_inputs(inputs)
    with eager_attention(model), evaluating(model), embeddings_need_grad(model):
        with torch.enable_grad():
            output = model(**batch, output_attentions=True)
            return attribute(output, target_score(output, target))


def hf_deletion_scorer(
    model,
    inputs: Mapping,
    target: Target,
    mode: str = "mask",
    replacement_id: int | None = None,
    probability: bool = True,
) -> Scorer:
    """``score(keep (T,) bool) -> float`` for :mod:`attnkit.interpret.faithfulness`.

    ``mode="mask"`` removes a token by setting its ``attention_mask`` to 0: no query attends
    to it any more (its own output is still computed, and the positions of the others do not
    shift), the cleanest removal for a model that reads one position (``[CLS]``, a language
    model's last token). ``mode="replace"`` keeps the mask and writes ``replacement_id`` in its
    place (the tokenizer's ``mask_token_id`` for BERT-like models, or ``pad_token_id`` /
    ``unk_token_id``): use it when the target reads every position (a mean-pooled sentence
    embedding), which masking alone would leave in. The score is ``target``'s probability
    (``probability=False``: its logit) or the callable's value, computed without gradients.
    """
    if mode not in ("mask", "replace"):
        raise ValueError(f"mode must be 'mask' or 'replace', got {mode!r}")
    if mode == "replace" and replacement_id is None:
        raise ValueError("mode='replace' needs replacement_id (e.g. tokenizer.mask_token_id)")
    batch = model_inputs(inputs)
    ids, mask = batch["input_ids"], batch["attention_mask"]

    def score(keep: np.ndarray) -> float:
        kept = torch.as_tensor(np.asarray(keep, dtype=bool), device=ids.device)[None]  # (1, T)
        if kept.shape != ids.shape:
            raise ValueError(f"keep has {kept.size(1)} tokens; input_ids has {ids.size(1)}")
        changed = dict(batch)
        if mode == "mask":
            changed["attention_mask"] = mask * kept  # (1, T)
        else:
            changed["input_ids"] = ids.masked_fill(~kept, replacement_id)  # (1, T)
        with torch.no_grad(), evaluating(model):
            return float(target_score(model(**changed), target, probability))

    return score


def hf_faithfulness(
    model,
    inputs: Mapping,
    target: Target,
    query: int | None = 0,
    removable=None,
    **options,
) -> tuple[Attribution, dict[str, DeletionCurve]]:
    """:func:`hf_attribute`, then the deletion curve of each of its importances for output
    position ``query`` (0: ``[CLS]``; ``None``: every position, for a mean-pooled target) and
    of random orders
    (:func:`~attnkit.interpret.faithfulness.compare_importances`).

    ``removable``: ``(T,)`` bool, default the real tokens (``attention_mask``) except
    ``query``; leave out special tokens by passing it. ``options``: ``mode``,
    ``replacement_id`` and ``probability`` of :func:`hf_deletion_scorer`, ``seed``,
    ``repeats`` and ``steps`` of :func:`~attnkit.interpret.faithfulness.compare_importances`.
    """
    scorer_keys = ("mode", "replacement_id", "probability")
    scorer_options = {k: options.pop(k) for k in scorer_keys if k in options}
    attribution = hf_attribute(model, inputs, target)
    if removable is None:
        removable = model_inputs(inputs)["attention_mask"][0].cpu().numpy().astype(bool)  # (T,)
        if query is not None:
            removable[query] = False
    score = hf_deletion_scorer(model, inputs, target, **scorer_options)
    curves = compare_importances(score, attribution.importances(query), removable, **options)
    return attribution, curves


__all__ = [
    "Target",
    "hf_attribute",
    "hf_deletion_scorer",
    "hf_faithfulness",
    "model_inputs",
    "target_score",
]
