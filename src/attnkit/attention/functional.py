"""The attention step as one function: score -> mask -> normalise -> weighted sum.

Everything else in attnkit (heads, local windows, caches, recording) is built around
:func:`attend`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from .masks import check_mask
from .normalisers import resolve_normaliser
from .scores import resolve_score


@dataclass
class AttentionOutput:
    """What an attention call returns. Weights are returned, never stored on a module.

    Attributes:
        context: ``(B, H, Tq, Dv)`` (or ``(B, Tq, Dv)`` for 3-d inputs; ``(B, Tq, D)`` from
            :class:`MultiHeadAttention`).
        weights: ``(B, H, Tq, Tk)`` (``(B, Tq, Tk)`` for 3-d inputs), or ``None`` when the
            caller did not ask for them. These are the normaliser's output before dropout.
        scores: the unnormalised, unmasked scores, when ``return_scores=True``.
        log_prob: ``(B, H, Tq)`` log-probability of the sampled key (``normaliser="sample"``).
        cache: the updated key/value cache (:class:`MultiHeadAttention` with ``use_cache``).
        path: which kernel ran and, for the readable path, why.
    """

    context: Tensor
    weights: Tensor | None = None
    scores: Tensor | None = None
    log_prob: Tensor | None = None
    cache: object | None = None
    path: str = ""


_FUSABLE_SCORES = ("dot", "scaled_dot")


def _fused_reason(score, normaliser, need_weights, return_scores, reweight) -> str | None:
    """Why the fused SDPA kernel cannot run, or ``None`` if it can."""
    if need_weights:
        return "weights were requested"
    if return_scores:
        return "scores were requested"
    if reweight is not None:
        return "a reweighting (local-p Gaussian) is applied after the normaliser"
    if not isinstance(score, str) or score not in _FUSABLE_SCORES:
        return f"score {getattr(score, '__name__', type(score).__name__)!r} is not dot-product"
    if normaliser != "softmax":
        return f"normaliser {normaliser!r} is not softmax"
    return None


def attend(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    score="scaled_dot",
    normaliser="softmax",
    scale: float | None = None,
    dropout: float = 0.0,
    need_weights: bool = True,
    return_scores: bool = False,
    reweight: Tensor | None = None,
    normaliser_options: dict | None = None,
) -> AttentionOutput:
    """Attend from queries to keys and return the context and the weights.

    ``context = normalise(score(q, k) masked) @ v`` (Vaswani et al. 2017, eq. (1), for
    ``scaled_dot`` + ``softmax``; Bahdanau et al. 2015, eqs. (5)-(6), for ``additive``).

    Args:
        query: ``(B, H, Tq, Dq)``, or ``(B, Tq, Dq)`` without the head axis.
        key: ``(B, H, Tk, Dk)`` or ``(B, Tk, Dk)``.
        value: ``(B, H, Tk, Dv)`` or ``(B, Tk, Dv)``.
        mask: bool, broadcastable to ``(B, H, Tq, Tk)`` (``(B, Tq, Tk)`` for 3-d inputs);
            True = may attend. A query whose keys are all masked gets zero weights and a zero
            context, never NaN.
        score: ``"dot"``, ``"scaled_dot"``, or a callable ``(q, k) -> (.., Tq, Tk)`` such as a
            learned score module (:class:`GeneralScore`, :class:`AdditiveScore`, ...).
        normaliser: ``"softmax"``, ``"sparsemax"``, ``"entmax15"``, ``"hard"``, ``"gumbel"``,
            ``"sample"``, or a callable.
        scale: overrides ``1/sqrt(d_k)`` for ``scaled_dot``.
        dropout: dropout probability on the weights (pass 0 at evaluation).
        need_weights: return the weights. When False and the mechanism is dot-product softmax,
            the fused ``scaled_dot_product_attention`` kernel runs; otherwise the readable path
            runs and ``output.path`` says why.
        return_scores: also return the raw scores.
        reweight: ``(.., Tq, Tk)`` factor multiplied into the weights after normalising
            (the local-p Gaussian, Luong et al. 2015 eq. (10)).
        normaliser_options: keyword options for the normaliser (``tau``, ``hard``, ``generator``).
    """
    if query.dim() != key.dim() or key.dim() != value.dim() or query.dim() not in (3, 4):
        raise ValueError(
            "query, key and value must all be 4-d (B, H, T, D) or all 3-d (B, T, D); got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    if key.size(-2) != value.size(-2):
        raise ValueError(f"key and value lengths differ: {key.size(-2)} vs {value.size(-2)}")
    if scale is not None and score != "scaled_dot":
        raise ValueError(f"scale applies only to score='scaled_dot', not to {score!r}")
    no_heads = query.dim() == 3
    if no_heads:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)  # (B,1,T,D)
        if mask is not None and mask.dim() >= 3:
            mask = mask.unsqueeze(-3)  # (B, 1, Tq, Tk)
        if reweight is not None and reweight.dim() >= 3:
            reweight = reweight.unsqueeze(-3)
    scores_shape = torch.Size((*query.shape[:-1], key.size(-2)))  # (B, H, Tq, Tk)
    if mask is not None:
        check_mask(mask, scores_shape)
        valid_row = mask.any(dim=-1, keepdim=True)  # (.., Tq, 1): has at least one key
    reason = _fused_reason(score, normaliser, need_weights, return_scores, reweight)

    if reason is None:
        output = _fused(query, key, value, mask, score, scale, dropout)
        if mask is not None:
            output.context = output.context.masked_fill(~valid_row, 0.0)
    else:
        scores = resolve_score(score, scale)(query, key)  # (B, H, Tq, Tk)
        raw = scores if return_scores else None
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            # A row with no key left would be all -inf (NaN after softmax); make it finite here
            # and zero its weights after normalising.
            scores = scores.masked_fill(~valid_row, 0.0)
        normalised = resolve_normaliser(normaliser, normaliser_options)(scores)
        weights, log_prob = normalised if isinstance(normalised, tuple) else (normalised, None)
        if mask is not None:
            weights = weights.masked_fill(~valid_row, 0.0)
            if log_prob is not None:
                log_prob = log_prob.masked_fill(~valid_row.squeeze(-1), 0.0)
        if reweight is not None:
            weights = weights * reweight
        dropped = F.dropout(weights, dropout) if dropout > 0 else weights
        context = dropped @ value  # (B, H, Tq, Dv)
        output = AttentionOutput(
            context, weights if need_weights else None, raw, log_prob, path=f"readable: {reason}"
        )

    if no_heads:
        output.context = output.context.squeeze(1)  # (B, Tq, Dv)
        for name in ("weights", "scores", "log_prob"):
            tensor = getattr(output, name)
            if tensor is not None:
                setattr(output, name, tensor.squeeze(1))
    return output


def _fused(query, key, value, mask, score, scale, dropout) -> AttentionOutput:
    """``scaled_dot_product_attention``, PyTorch's fused kernel (flash kernel on CPU)."""
    if score == "dot":
        scale = 1.0
    if mask is not None:
        # A fully masked row would give NaN in the kernel; open it here, zero it afterwards.
        mask = mask | ~mask.any(dim=-1, keepdim=True)
    context = F.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, dropout_p=dropout, scale=scale
    )  # (B, H, Tq, Dv)
    return AttentionOutput(context, path="fused: scaled_dot_product_attention")
