"""The fast dispatch of :func:`attnkit.attention.attend`: the same numbers, fewer passes.

:func:`attend` calls :func:`attend_fast` when :func:`applies` (a dot-product score named by
string, and the raw scores not asked for). Two routes, both tested equal to the readable path:

- **fused**: PyTorch's ``scaled_dot_product_attention`` (a flash kernel on CPU) when the
  weights are not needed and the mechanism is dot-product softmax without reweighting;
- **folded**: otherwise the scores are computed in one ``baddbmm`` that folds the scale (into
  the queries) and the mask (as a ``-inf`` bias) into the product, or masked in place, and the
  empty-row fix is skipped when no query row is empty.

It never falls back silently: :func:`why_not_fused` names the reason, which the output's
``path`` carries (``"readable: weights were requested"``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from attnkit.attention.normalisers import resolve_normaliser
from attnkit.attention.output import AttentionOutput
from attnkit.attention.scores import resolve_score

NEG_INF = float("-inf")
DOT_PRODUCT = ("dot", "scaled_dot")
FUSED_PATH = "fused: scaled_dot_product_attention"


def applies(score, return_scores: bool) -> bool:
    """Whether :func:`attend_fast` can run: a dot-product score given by name (its scores are a
    fresh tensor nothing else holds, so they may be changed in place), raw scores not wanted."""
    return isinstance(score, str) and score in DOT_PRODUCT and not return_scores


def why_not_fused(score, normaliser, need_weights, return_scores, reweight) -> str | None:
    """Why the fused SDPA kernel cannot run, or ``None`` if it can."""
    if need_weights:
        return "weights were requested"
    if return_scores:
        return "scores were requested"
    if reweight is not None:
        return "a reweighting (local-p Gaussian) is applied after the normaliser"
    if not isinstance(score, str) or score not in DOT_PRODUCT:
        return f"score {getattr(score, '__name__', type(score).__name__)!r} is not dot-product"
    if normaliser != "softmax":
        return f"normaliser {normaliser!r} is not softmax"
    return None


def attend_fast(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    score: str = "scaled_dot",
    normaliser="softmax",
    scale: float | None = None,
    dropout: float = 0.0,
    need_weights: bool = True,
    reweight: Tensor | None = None,
    normaliser_options: dict | None = None,
    *,
    bias: Tensor | None = None,
) -> AttentionOutput:
    """:func:`attend` for 4-d ``(B, H, T, D)`` inputs and a checked mask, when :func:`applies`.

    Same arguments (in :func:`attend`'s order, positional too) and result as :func:`attend`
    (Vaswani et al. 2017, eq. (1)); ``bias`` is added to the scaled scores (a float
    ``attn_mask`` for the fused kernel).
    """
    valid_row = None if mask is None else mask.any(dim=-1, keepdim=True)  # (.., Tq, 1)
    # Every query has a key left (the usual case): both routes skip the row fixes.
    all_valid = valid_row is None or _all_true(valid_row)
    reason = why_not_fused(score, normaliser, need_weights, False, reweight)
    if reason is None:
        opened = mask if mask is None or all_valid else mask | ~valid_row  # see _fused
        attn_mask = opened if bias is None else _float_mask(bias.to(query.dtype), opened)
        context = _fused(query, key, value, attn_mask, valid_row, all_valid, score, scale, dropout)
        return AttentionOutput(context, path=FUSED_PATH)
    scores = masked_scores(query, key, mask, score, scale)  # (B, H, Tq, Tk)
    if bias is not None:
        scores = scores + bias  # -inf where masked stays -inf
    if not all_valid:
        # A row with no key left would be all -inf (NaN after softmax); make it finite here
        # and zero its weights after normalising.
        scores = scores.masked_fill(~valid_row, 0.0)
    normalised = resolve_normaliser(normaliser, normaliser_options)(scores)
    weights, log_prob = normalised if isinstance(normalised, tuple) else (normalised, None)
    if not all_valid:
        weights = weights.masked_fill(~valid_row, 0.0)
        if log_prob is not None:
            log_prob = log_prob.masked_fill(~valid_row.squeeze(-1), 0.0)
    if reweight is not None:
        weights = weights * reweight
    dropped = F.dropout(weights, dropout) if dropout > 0 else weights
    context = dropped @ value  # (B, H, Tq, Dv)
    weights = weights if need_weights else None
    return AttentionOutput(context, weights, None, log_prob, path=f"readable: {reason}")


def _float_mask(bias: Tensor, mask: Tensor | None) -> Tensor:
    """The bias as the fused kernel's additive ``attn_mask``: ``-inf`` where ``mask`` is False."""
    return bias if mask is None else bias.masked_fill(~mask, NEG_INF)  # (.., Tq, Tk)


def _all_true(valid_row: Tensor) -> bool:
    """True when every query row has a key. Checked on the CPU only: elsewhere reading the
    answer would synchronise the device, so the row fixes simply always run."""
    return valid_row.device.type == "cpu" and bool(valid_row.all())


def _fused(query, key, value, mask, valid_row, all_valid, score, scale, dropout) -> Tensor:
    """``scaled_dot_product_attention``, PyTorch's fused kernel (flash kernel on CPU); returns
    the context ``(B, H, Tq, Dv)`` with zeros for the rows that have no key."""
    if score == "dot":
        scale = 1.0
    # A fully masked row would give NaN in the kernel: the caller opened it in the mask, and
    # its context is zeroed here afterwards.
    context = F.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, dropout_p=dropout, scale=scale
    )  # (B, H, Tq, Dv)
    return context if all_valid else context.masked_fill(~valid_row, 0.0)


def masked_scores(
    query: Tensor, key: Tensor, mask: Tensor | None, score: str, scale: float | None
) -> Tensor:
    """Dot-product scores ``(B, H, Tq, Tk)`` with ``-inf`` where ``mask`` is False, computed
    with as few passes over the ``(Tq, Tk)`` matrix as the shapes allow."""
    scores = _biased_scores(query, key, mask, score, scale)
    if scores is not None:
        return scores
    if score == "scaled_dot":
        product = query @ key.transpose(-2, -1)  # (B, H, Tq, Tk)
        # scaled in place on the fresh product: the values of scaled_dot_score, one tensor fewer
        scores = product.mul_(1.0 / math.sqrt(query.size(-1)) if scale is None else scale)
    else:
        scores = resolve_score(score)(query, key)  # (B, H, Tq, Tk)
    if mask is None:
        return scores
    in_place = torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape
    return (scores.masked_fill_ if in_place else scores.masked_fill)(~mask, NEG_INF)


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
