"""The attention step as one function: score -> mask -> normalise -> weighted sum.

Everything else in attnkit (heads, local windows, caches, recording) is built around
:func:`attend`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attnkit.attention.masks import check_mask
from attnkit.attention.normalisers import resolve_normaliser
from attnkit.attention.scores import resolve_score


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

    # Every query has a key left (the usual case) lets both paths skip the row fixes below.
    all_valid = mask is None or _all_true(valid_row)
    if reason is None:
        masking = None if mask is None else (mask, valid_row, all_valid)
        output = _fused(query, key, value, masking, score, scale, dropout)
        if not all_valid:
            output.context = output.context.masked_fill(~valid_row, 0.0)
    else:
        # A string score gives a fresh tensor that nothing else holds: mask it inside the
        # product (_biased_scores) or in place (no (B, H, Tq, Tk) copy); a callable's output
        # may be saved for its backward, so copy.
        own = isinstance(score, str) and not return_scores
        scores = _biased_scores(query, key, mask, score, scale) if own else None
        masked = scores is not None and mask is not None
        if scores is None:
            scores = _dot_scores(query, key, score, scale, own)  # (B, H, Tq, Tk)
        raw = scores if return_scores else None
        if mask is not None:
            if not masked:
                in_place = own and torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape
                fill = scores.masked_fill_ if in_place else scores.masked_fill
                scores = fill(~mask, NEG_INF)
            if not all_valid:
                # A row with no key left would be all -inf (NaN after softmax); make it finite
                # here and zero its weights after normalising.
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


NEG_INF = float("-inf")


def _all_true(valid_row: Tensor) -> bool:
    """True when every query row has a key. Checked on the CPU only: elsewhere reading the
    answer would synchronise the device, so the row fixes simply always run."""
    return valid_row.device.type == "cpu" and bool(valid_row.all())


def _dot_scores(query: Tensor, key: Tensor, score, scale: float | None, own: bool) -> Tensor:
    """The scores ``(B, H, Tq, Tk)``; for ``scaled_dot`` with ``own`` the scaling is done in
    place on the fresh product (same values as :func:`scaled_dot_score`, one tensor fewer)."""
    if own and score == "scaled_dot":
        product = query @ key.transpose(-2, -1)  # (B, H, Tq, Tk)
        return product.mul_(1.0 / math.sqrt(query.size(-1)) if scale is None else scale)
    return resolve_score(score, scale)(query, key)


def _biased_scores(
    query: Tensor, key: Tensor, mask: Tensor | None, score: str, scale: float | None
) -> Tensor | None:
    """Masked dot-product scores ``(B, H, Tq, Tk)`` in one batched product, or None when the
    shapes do not allow it (then :func:`_dot_scores` and a ``masked_fill`` run instead).

    The scale multiplies the queries ``(B, H, Tq, D)`` rather than the ``(Tq, Tk)`` product,
    and the mask enters as a ``-inf`` bias added inside ``baddbmm`` (as
    ``nn.MultiheadAttention`` does), so neither costs a pass over the scores, forward or
    backward. The bias is built at the mask's own size: a mask shared by the heads and either
    by the batch (causal, ``(1, 1, Tq, Tk)``) or by the queries (padding, ``(B, 1, 1, Tk)``).
    """
    if score not in ("dot", "scaled_dot") or query.shape[:2] != key.shape[:2]:
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


def _fused(query, key, value, masking, score, scale, dropout) -> AttentionOutput:
    """``scaled_dot_product_attention``, PyTorch's fused kernel (flash kernel on CPU).

    ``masking`` is ``(mask, valid_row, all_valid)`` or None."""
    if score == "dot":
        scale = 1.0
    mask = None
    if masking is not None:
        mask, valid_row, all_valid = masking
        if not all_valid:
            # A fully masked row would give NaN in the kernel; open it here, zero it afterwards.
            mask = mask | ~valid_row
    context = F.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, dropout_p=dropout, scale=scale
    )  # (B, H, Tq, Dv)
    return AttentionOutput(context, path="fused: scaled_dot_product_attention")


def _rows(tensor: Tensor | None, start: int, stop: int, tq: int) -> Tensor | None:
    """Query rows ``start:stop`` of a mask or reweighting broadcastable to ``(.., Tq, Tk)``;
    one that broadcasts along the query axis (size 1 or fewer than two dims) is kept whole."""
    if tensor is None or tensor.dim() < 2 or tensor.size(-2) == 1 or tq == 1:
        return tensor
    return tensor[..., start:stop, :]  # (.., chunk, Tk)


def iter_attend(
    query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *, chunk: int, **options
) -> Iterator[tuple[int, AttentionOutput]]:
    """:func:`attend` over blocks of ``chunk`` queries: yields ``(start, output)`` per block,
    whose ``context`` and ``weights`` are query rows ``start : start + chunk``.

    Each query's softmax runs over all keys independently of the other queries
    (Vaswani et al. 2017, eq. (1)), so the blocks are exactly the rows of the unchunked result.
    Only one ``(B, H, chunk, Tk)`` block of scores/weights is alive at a time if the caller
    drops each before asking for the next (e.g. summarises or writes it out). With dropout the
    random masks differ from an unchunked call. ``options`` are :func:`attend`'s keywords.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1 query, got {chunk}")
    tq = query.size(-2)
    reweight = options.pop("reweight", None)
    for start in range(0, tq, chunk):
        stop = min(start + chunk, tq)
        yield (
            start,
            attend(
                query[..., start:stop, :],  # (B, [H,] chunk, Dq)
                key,
                value,
                _rows(mask, start, stop, tq),
                reweight=_rows(reweight, start, stop, tq),
                **options,
            ),
        )


def attend_chunked(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    chunk: int,
    weights_out: Tensor | None = None,
    **options,
) -> AttentionOutput:
    """:func:`attend` with the weights computed ``chunk`` queries at a time (memory-bounded).

    The full weights ``(B, H, Tq, Tk)`` are written block by block into ``weights_out`` (a
    preallocated tensor of that shape and the scores' dtype; allocated here when None), so
    the temporaries (scores, masked scores, softmax) never exceed one ``(B, H, chunk, Tk)``
    block each. The result equals ``attend(..., need_weights=True)`` (see :func:`iter_attend`).
    Meant for inference and inspection: under autograd each block keeps its own graph.
    """
    options["need_weights"] = True
    contexts, extras = [], {"scores": [], "log_prob": []}
    path = ""
    for start, out in iter_attend(query, key, value, mask, chunk=chunk, **options):
        if weights_out is None:
            shape = (*out.weights.shape[:-2], query.size(-2), key.size(-2))  # (B, [H,] Tq, Tk)
            weights_out = out.weights.new_empty(shape)
        elif start == 0 and weights_out.shape[-2:] != (query.size(-2), key.size(-2)):
            raise ValueError(
                f"weights_out has shape {tuple(weights_out.shape)}, expected (.., "
                f"{query.size(-2)}, {key.size(-2)})"
            )
        weights_out[..., start : start + out.weights.size(-2), :] = out.weights
        contexts.append(out.context)
        for name, parts in extras.items():
            if getattr(out, name) is not None:
                parts.append(getattr(out, name))
        path = out.path
    context = torch.cat(contexts, dim=-2)  # (B, [H,] Tq, Dv)
    scores = torch.cat(extras["scores"], dim=-2) if extras["scores"] else None
    log_prob = torch.cat(extras["log_prob"], dim=-1) if extras["log_prob"] else None
    return AttentionOutput(context, weights_out, scores, log_prob, path=f"chunked {chunk}, {path}")
