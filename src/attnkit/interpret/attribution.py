"""Attribution beyond raw attention: attention weights times their gradients, and gradient
rollout.

Raw attention says where a query looked, not whether that mattered for the output. Both methods
here weigh each attention weight ``A`` by the gradient ``dy/dA`` of a target score ``y`` (a class
logit, a next-token logit, a similarity) with respect to that weight, where every entry of ``A``
is treated as an independent input of the rest of the network:

- **attention x gradient** (:func:`attention_times_gradient`): ``A ⊙ dy/dA`` per layer and head,
  the first-order (Taylor) share of ``y`` carried by each edge ``query -> key`` (Chefer, Gur &
  Wolf 2021, eq. (5) before the head mean and clamp); :func:`attention_gradient_scores` sums
  it to one score per key;
- **gradient rollout** (:func:`gradient_rollout`): Chefer, Gur & Wolf 2021 ("Generic
  Attention-model Explainability for Interpreting Bi-Modal and Encoder-Decoder Transformers"),
  eqs. (5)-(6): ``Ā_l = E_h[(∇A_l ⊙ A_l)^+]`` and ``R <- R + Ā_l R`` from ``R = I``.

Weights and gradients are :data:`~attnkit.interpret.structure.Layers` (``(H, Tq, Tk)`` per
layer, layer 0 first). :func:`attention_gradients` obtains both from any forward pass whose
attention tensors are still in the autograd graph (``L`` tensors ``(B, H, T, T)``): a Hugging
Face model run eagerly with ``output_attentions=True``, attnkit's
:class:`~attnkit.modules.bert.BertEncoder` or any attnkit model run with ``need_weights=True``
(the readable path returns the very weights that multiply the values), and :func:`attribute`
wraps that into an :class:`Attribution` with the importance vectors of
:mod:`attnkit.interpret.faithfulness`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from attnkit.interpret.rollout import attention_rollout
from attnkit.interpret.structure import Layers

IMPORTANCES = ("attention", "rollout", "attention x gradient", "gradient rollout")


def _pairs(weights: Sequence[Tensor], grads: Sequence[Tensor]) -> list[tuple[Tensor, Tensor]]:
    """Check that weights and gradients are the same number of ``(H, Tq, Tk)`` tensors."""
    if len(weights) != len(grads) or not weights:
        raise ValueError(f"{len(weights)} layers of weights but {len(grads)} of gradients")
    pairs = []
    for i, (w, g) in enumerate(zip(weights, grads, strict=True)):
        w, g = torch.as_tensor(w), torch.as_tensor(g)
        if w.dim() != 3 or w.shape != g.shape:
            raise ValueError(
                f"layer {i}: weights {tuple(w.shape)} and gradients {tuple(g.shape)} must be the "
                "same shape (H, Tq, Tk)"
            )
        pairs.append((w, g))
    return pairs


def attention_times_gradient(weights: Sequence[Tensor], grads: Sequence[Tensor]) -> Layers:
    """``A_l ⊙ dy/dA_l`` per layer and head: ``(H, Tq, Tk)`` per layer, signed.

    Entry ``[h, i, j]`` is the first-order change of the target ``y`` if the edge ``i -> j`` of
    head ``h`` were removed (``A[h, i, j] -> 0``), with a minus sign: positive means that the
    attention to key ``j`` raised ``y`` (Chefer, Gur & Wolf 2021, eq. (5), before the clamp).
    """
    return [w * g for w, g in _pairs(weights, grads)]  # (H, Tq, Tk) each


def attention_gradient_scores(
    weights: Sequence[Tensor],
    grads: Sequence[Tensor],
    layer: int | None = -1,
    query: int | None = None,
) -> np.ndarray:
    """One signed score per key ``(Tk,)``: ``A ⊙ dy/dA`` summed over heads and queries.

    ``layer``: which layer (default the last; ``None`` sums all layers, whose keys are then
    mixtures of tokens rather than tokens). ``query``: ``None`` sums over all query rows, an
    index keeps that row only. The sum over queries is the default because the gradient itself
    picks the rows that matter: a classifier reading the first token's final state (``[CLS]``)
    gets ``dy/dA = 0`` on every other row of the last layer, and a causal language model's
    logit at position ``t`` on every other row there, so the sum equals the target row without
    the caller having to name it; at lower layers every row carries part of the output.
    """
    products = attention_times_gradient(weights, grads)
    chosen = products if layer is None else [products[layer]]
    total = sum(p.sum(0) for p in chosen)  # (Tq, Tk), summed over heads (and layers)
    scores = total.sum(0) if query is None else total[query]  # (Tk,)
    return scores.detach().to("cpu", torch.float64).numpy()


def gradient_rollout(weights: Sequence[Tensor], grads: Sequence[Tensor]) -> np.ndarray:
    """Relevance ``R (T, T)`` of Chefer, Gur & Wolf 2021, eqs. (5)-(6), for self-attention.

    Per layer ``l = 0 .. L-1`` (input side first): ``Ā_l = E_h[(dy/dA_l ⊙ A_l)^+]`` (eq. (5):
    gradient-weighted heads, negative contributions clamped to 0, mean over heads) and
    ``R <- R + Ā_l R`` (eq. (6)) from ``R = I`` (each token starts relevant to itself; the
    identity stands for the residual connection). ``R[i, j]`` is the relevance of input token
    ``j`` for output position ``i``: take row 0 for a ``[CLS]`` classifier, row ``t`` for a
    causal language model's prediction at ``t``. Rows are not normalised. With zero gradients
    (a target that ignores attention) ``R = I``.
    """
    pairs = _pairs(weights, grads)
    t = pairs[0][0].shape[-1]
    relevance = torch.eye(t, dtype=torch.float64)  # (T, T)
    for i, (w, g) in enumerate(pairs):
        if w.shape[-2:] != (t, t):
            raise ValueError(f"layer {i}: expected self-attention (H, {t}, {t}), got {w.shape}")
        a_bar = (g.double() * w.double()).clamp(min=0).mean(0)  # (T, T), eq. (5)
        relevance = relevance + a_bar @ relevance  # (T, T), eq. (6)
    return relevance.numpy()


def attention_gradients(
    attentions: Sequence[Tensor],
    score: Tensor,
    batch_index: int = 0,
    length: int | None = None,
) -> tuple[Layers, Layers]:
    """The weights and ``dy/dA`` of one example, from attention tensors in the graph.

    Args:
        attentions: ``L`` tensors ``(B, H, T, T)`` that ``score`` was computed from (not
            detached: Hugging Face eager attention with ``output_attentions=True``, attnkit's
            models with ``need_weights=True``).
        score: the scalar target ``y``; its graph is freed afterwards.
        batch_index: the example; length: keep the first ``length`` queries and keys (right
            padding), e.g. ``int(attention_mask[i].sum())``.

    Returns:
        ``(weights, grads)``, :data:`Layers` of ``(H, T, T)`` each, detached, on the CPU, in the
        attentions' dtype. Computed with ``torch.autograd.grad``, so no parameter's ``.grad``
        is touched.
    """
    if score.numel() != 1:
        raise ValueError(f"the target score must be a scalar, got shape {tuple(score.shape)}")
    if not attentions:
        raise ValueError("no attention tensors; run the model so that it returns its weights")
    if not all(a.requires_grad for a in attentions):
        raise ValueError(
            "the attention weights are not in the autograd graph: run the forward pass with "
            "gradients enabled (not under torch.no_grad) and with weights recorded "
            "(output_attentions=True with eager attention, or need_weights=True)"
        )
    grads = torch.autograd.grad(score.reshape(()), list(attentions), allow_unused=True)
    if all(g is None for g in grads):
        raise ValueError(
            "the score does not depend on these attention tensors: pass the attentions of the "
            "forward pass that computed it"
        )
    grads = [
        torch.zeros_like(a) if g is None else g for a, g in zip(attentions, grads, strict=True)
    ]
    crop = slice(None) if length is None else slice(0, length)

    def one(t: Tensor) -> Tensor:
        return t[batch_index, :, crop, crop].detach().cpu()  # (H, T, T)

    return [one(a) for a in attentions], [one(g) for g in grads]


@dataclass
class Attribution:
    """Weights and gradients of one example (:data:`Layers`, ``(H, T, T)`` per layer), the
    target score ``y`` they belong to, and the importance vectors built from them."""

    weights: Layers
    grads: Layers
    score: float

    def products(self) -> Layers:
        """:func:`attention_times_gradient`: ``A ⊙ dy/dA`` per layer, ``(H, T, T)``."""
        return attention_times_gradient(self.weights, self.grads)

    def relevance(self) -> np.ndarray:
        """:func:`gradient_rollout`: ``R (T, T)``."""
        return gradient_rollout(self.weights, self.grads)

    def importances(self, query: int | None = 0, residual: float = 0.5) -> dict[str, np.ndarray]:
        """Four scores per token ``(T,)``, one per name of :data:`IMPORTANCES`, all for output
        position ``query`` (0: ``[CLS]``; a language model's predicting position; ``None``: a
        target that reads every position, e.g. a mean-pooled sentence embedding, for which
        rows are averaged, or summed for attention x gradient):

        - ``"attention"``: the last layer's row ``query``, mean over heads (raw attention);
        - ``"rollout"``: row ``query`` of :func:`~attnkit.interpret.rollout.attention_rollout`
          (Abnar & Zuidema 2020, eq. (1), with ``residual``);
        - ``"attention x gradient"``: :func:`attention_gradient_scores` of the last layer, row
          ``query``;
        - ``"gradient rollout"``: row ``query`` of :func:`gradient_rollout`.
        """

        def row(matrix: np.ndarray) -> np.ndarray:  # (T, T) -> (T,)
            return matrix.mean(0) if query is None else matrix[query]

        return {
            "attention": row(self.weights[-1].double().mean(0).numpy()),
            "rollout": row(attention_rollout(self.weights, residual)),
            "attention x gradient": attention_gradient_scores(self.weights, self.grads, -1, query),
            "gradient rollout": row(self.relevance()),
        }


def attribute(output, score: Tensor, batch_index: int = 0, length: int | None = None):
    """:class:`Attribution` from a model output whose ``attentions`` (``L`` tensors
    ``(B, H, T, T)``) are still in the graph, and the scalar target ``score`` computed from it.

    Works for a Hugging Face output (eager, ``output_attentions=True``), attnkit's
    :class:`~attnkit.modules.bert.BertOutput` (``need_weights=True``), and any application's
    output with such an ``attentions`` tuple. ``length`` crops right padding.
    """
    attentions = getattr(output, "attentions", None)
    if not attentions:
        raise ValueError(
            "the output holds no attentions: ask the model for its weights "
            "(output_attentions=True with eager attention, or need_weights=True)"
        )
    weights, grads = attention_gradients(attentions, score, batch_index, length)
    return Attribution(weights, grads, float(score.detach()))


__all__ = [
    "IMPORTANCES",
    "Attribution",
    "attention_gradient_scores",
    "attention_gradients",
    "attention_times_gradient",
    "attribute",
    "gradient_rollout",
]
