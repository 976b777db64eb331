"""The fast dispatch of :func:`attnkit.attention.attend`: steps substituted, the same numbers.

:func:`attend` calls :func:`attend_fast` when :func:`applies` (a dot-product score named by
string, the raw scores not asked for, ``path="auto"``). It substitutes steps of
:mod:`attnkit.attention.steps` by kernels that do their work in fewer passes, and calls the
step functions themselves for every step it does not substitute. Two routes, which the
output's ``path`` names, both tested equal to the readable path:

- ``"fused"``: PyTorch's ``scaled_dot_product_attention`` (a flash kernel on CPU) replaces all
  four steps when the weights are not needed and the mechanism is dot-product softmax without
  reweighting;
- ``"folded"``: otherwise score and mask are replaced by one ``baddbmm`` that folds the scale
  (into the queries) and the mask (as a ``-inf`` bias) into the product, or by a product
  scaled and masked in place (:func:`masked_scores`); normalise, the empty-row rule and the
  weighted sum are the steps' own.

It never falls back silently: :func:`why_not_fused` names the reason, which the output's
``reason`` carries (``"weights were requested"``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from attnkit.attention import steps
from attnkit.attention.grouped import shared_heads
from attnkit.attention.output import AttentionOutput
from attnkit.attention.steps import AttendSettings

NEG_INF = float("-inf")
DOT_PRODUCT = ("dot", "scaled_dot")


def applies(settings: AttendSettings) -> bool:
    """Whether :func:`attend_fast` can run: a dot-product score given by name (its scores are a
    fresh tensor nothing else holds, so they may be changed in place), raw scores not wanted,
    and the readable path not asked for."""
    score = settings.score
    dot_product = isinstance(score, str) and score in DOT_PRODUCT
    return settings.path == "auto" and dot_product and not settings.return_scores


def why_not_fused(settings: AttendSettings, reweight: Tensor | None) -> str | None:
    """Why the fused SDPA kernel cannot run, or ``None`` if it can."""
    score, normaliser = settings.score, settings.normaliser
    # first the reasons that rule out the fast dispatch as a whole (the readable path runs)
    if settings.path == "readable":
        return "path='readable' was asked for"
    if settings.return_scores:
        return "scores were requested"
    if not isinstance(score, str) or score not in DOT_PRODUCT:
        return f"score {getattr(score, '__name__', type(score).__name__)!r} is not dot-product"
    if settings.need_weights:
        return "weights were requested"
    if reweight is not None:
        return "a reweighting (local-p Gaussian) is applied after the normaliser"
    if normaliser != "softmax":
        return f"normaliser {normaliser!r} is not softmax"
    return None


def attend_fast(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None,
    settings: AttendSettings,
    *,
    reweight: Tensor | None = None,
    bias: Tensor | None = None,
    causal: bool = False,
) -> AttentionOutput:
    """:func:`attend` for 4-d ``(B, H, T, D)`` inputs and a checked mask, when :func:`applies`.

    The same result as :func:`attend`'s readable path (Vaswani et al. 2017, eq. (1)); ``bias``
    is added to the scaled scores (a float ``attn_mask`` for the fused kernel). ``causal``
    (with no mask, no bias and equal lengths, which :func:`attend` ensures) is the kernel's
    ``is_causal``.
    """
    empty = steps.empty_rows(mask)  # (.., Tq, 1), None when every query has a key
    reason = why_not_fused(settings, reweight)
    key, value = shared_heads(query, key, value, fused=reason is None)  # (B, H_kv or H, Tk, D)
    if reason is None:
        context = _fused(query, key, value, mask, empty, settings, bias, causal)
        return AttentionOutput(context, path="fused")
    scores, path = folded_scores(query, key, mask, settings), "folded"  # steps 1-2 at once
    if scores is None:  # nothing to fold for these shapes: the readable steps 1-2
        scores, path = steps.mask(steps.score(query, key, settings, bias), mask, empty), "readable"
    else:
        scores = _biased_and_finite(scores, bias, empty)
    weights, log_prob = steps.normalise(scores, settings, reweight)
    weights, log_prob = steps.empty_row_rule(empty, weights, log_prob)
    context = steps.weighted_sum(weights, value, settings.dropout)
    weights = weights if settings.need_weights else None
    return AttentionOutput(context, weights, None, log_prob, path=path, reason=reason)


def _biased_and_finite(scores: Tensor, bias: Tensor | None, empty: Tensor | None) -> Tensor:
    """Folded scores plus ``bias`` (``-inf`` where masked stays ``-inf``), with the ``empty``
    rows, all ``-inf`` here (NaN after softmax), made finite as :func:`steps.mask` keeps them."""
    scores = scores if bias is None else scores + bias
    return scores if empty is None else scores.masked_fill(empty, 0.0)


def _fused(query, key, value, mask, empty, settings: AttendSettings, bias, causal=False) -> Tensor:
    """``scaled_dot_product_attention``, PyTorch's fused kernel (flash kernel on CPU); returns
    the context ``(B, H, Tq, Dv)``, zero for the ``empty`` rows (the empty-row rule). Keys and
    values of fewer heads than the queries are read shared (``enable_gqa``), not copied."""
    # A fully masked row would give NaN in the kernel: it is opened in the mask here, and its
    # context zeroed afterwards.
    opened = mask if empty is None else mask | empty  # (.., Tq, Tk)
    if bias is not None:
        bias = bias.to(query.dtype)
        opened = bias if opened is None else bias.masked_fill(~opened, NEG_INF)  # float mask
    scale = 1.0 if settings.score == "dot" else settings.scale
    shared = key.size(-3) != query.size(-3)  # H_kv key/value heads for H query heads (GQA)
    context = F.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=opened,
        dropout_p=settings.dropout,
        is_causal=causal,
        scale=scale,
        enable_gqa=shared,
    )  # (B, H, Tq, Dv)
    return steps.empty_row_rule(empty, context)[0]


def folded_scores(
    query: Tensor, key: Tensor, mask: Tensor | None, settings: AttendSettings
) -> Tensor | None:
    """Steps 1-2 substituted: dot-product scores ``(B, H, Tq, Tk)`` with ``-inf`` where ``mask``
    is False, in fewer passes over the ``(Tq, Tk)`` matrix than the readable steps (one
    ``baddbmm``, or the fresh product scaled and masked in place); None when these shapes and
    this score leave nothing to fold (``dot``, keys shared by the heads, no mask to fill in place).
    """
    scores = _biased_scores(query, key, mask, settings.score, settings.scale)
    if scores is not None:
        return scores
    shape = scores_shape(query, key)  # (B, H, Tq, Tk)
    in_place = mask is not None and torch.broadcast_shapes(mask.shape, shape) == shape
    if settings.score == "scaled_dot":
        product = query @ key.transpose(-2, -1)  # (B, H, Tq, Tk)
        # scaled in place on the fresh product: the values of scaled_dot_score, one tensor fewer
        scale = settings.scale
        scores = product.mul_(1.0 / math.sqrt(query.size(-1)) if scale is None else scale)
    elif in_place:
        scores = steps.score(query, key, settings, None)  # (B, H, Tq, Tk)
    else:
        return None
    if in_place:
        return scores.masked_fill_(~mask, NEG_INF)  # in place: the fresh scores are ours
    return steps.mask(scores, mask, None)


def scores_shape(query: Tensor, key: Tensor) -> torch.Size:
    """The shape ``(B, H, Tq, Tk)`` of the scores of 4-d queries and keys (heads broadcast)."""
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])  # (B, H)
    return torch.Size((*batch, query.size(-2), key.size(-2)))


def _biased_scores(
    query: Tensor, key: Tensor, mask: Tensor | None, score: str, scale: float | None
) -> Tensor | None:
    """Masked dot-product scores ``(B, H, Tq, Tk)`` in one batched product, or None when the
    shapes do not allow it (then :func:`masked_scores` multiplies and masks in place).

    The scale multiplies the queries ``(B, H, Tq, D)`` rather than the ``(Tq, Tk)`` product,
    and the mask enters as a ``-inf`` bias added inside ``baddbmm`` (as
    ``nn.MultiheadAttention`` does), so neither costs a pass over the scores, forward or
    backward. The bias is built at the mask's own size: a mask shared by the heads and either
    by the batch (causal, ``(1, 1, Tq, Tk)``) or by the queries (padding, ``(B, 1, 1, Tk)``).
    """
    if query.shape[:2] != key.shape[:2]:
        return None
    b, h, tq, d = query.shape
    tk = key.size(-2)
    bias = None
    if mask is not None:
        m = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))  # (mB, mH, mQ, mK)
        if m.dim() != 4 or m.size(1) != 1 or (m.size(0) != 1 and m.size(2) != 1):
            return None
        bias = torch.zeros(m.shape, dtype=query.dtype, device=query.device)
        bias.masked_fill_(~m, NEG_INF)  # (mB, 1, mQ, mK): 0 where allowed, -inf elsewhere
        if m.size(0) == 1:
            bias = bias.view(1, m.size(2), m.size(3))  # (1, mQ, mK), broadcast over B*H
        else:
            bias = bias.expand(b, h, 1, m.size(3)).reshape(b * h, 1, m.size(3))  # (B*H, 1, Tk)
    factor = 1.0 if score == "dot" else (1.0 / math.sqrt(d) if scale is None else scale)
    q = (query * factor if factor != 1.0 else query).reshape(b * h, tq, d)  # (B*H, Tq, D)
    k = key.reshape(b * h, tk, d).transpose(1, 2)  # (B*H, D, Tk)
    scores = torch.bmm(q, k) if bias is None else torch.baddbmm(bias, q, k)  # (B*H, Tq, Tk)
    return scores.view(b, h, tq, tk)
