"""The attention step as one function: score -> mask -> normalise -> weighted sum.

Everything else in attnkit (heads, local windows, caches, recording) is built around
:func:`attend`. Its readable path is the composition of the step functions in
:mod:`attnkit.attention.steps`; its fast dispatch (:mod:`attnkit.attention.fast`) substitutes
steps by the fused kernel or by scores folded into one ``baddbmm``, and is tested equal to it.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import Tensor

from attnkit.attention import fast, steps
from attnkit.attention.grouped import shared_heads
from attnkit.attention.masks import causal_mask, check_mask, combine
from attnkit.attention.output import AttentionOutput
from attnkit.attention.steps import AttendSettings


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
    bias: Tensor | None = None,
    path: str = "auto",
    causal: bool = False,
) -> AttentionOutput:
    """Attend from queries to keys: ``context = normalise(mask(score(q, k))) @ v``.

    Vaswani et al. 2017, eq. (1), for ``scaled_dot`` + ``softmax``; Bahdanau et al. 2015,
    eqs. (5)-(6), for ``additive``. Shapes ``(B, H, T, D)`` or, without heads, ``(B, T, D)``.

    Args:
        query: ``(B, H, Tq, Dq)``; key, value: ``(B, H_kv, Tk, Dk | Dv)``, ``H_kv`` dividing H.
        mask: bool, broadcastable to ``(B, H, Tq, Tk)``; True = may attend. A query whose keys
            are all masked gets zero weights and a zero context, never NaN.
        score: ``"dot"``, ``"scaled_dot"``, or a callable ``(q, k) -> (.., Tq, Tk)`` such as
            :class:`GeneralScore` or :class:`AdditiveScore`.
        normaliser: ``"softmax"``, ``"sparsemax"``, ``"entmax15"``, ``"hard"``, ``"gumbel"``,
            ``"sample"``, ``"sigmoid"`` (independent gates), a callable; options: its keywords.
        scale: overrides ``1/sqrt(d_k)`` for ``scaled_dot``; dropout: on the weights (0 at eval).
        need_weights: return the weights (``return_scores``: the raw scores too). When False
            and the mechanism is dot-product softmax, the fused kernel runs (:mod:`.fast`).
        reweight: ``(.., Tq, Tk)`` factor multiplied into the weights after normalising
            (the local-p Gaussian, Luong et al. 2015 eq. (10)).
        bias: float ``(.., Tq, Tk)`` added to the scaled scores before masking (relative
            positions: :mod:`attnkit.attention.positions`); ``scores`` include it.
        path: ``"auto"`` (the fast dispatch where it applies) or ``"readable"`` (the four
            steps of :mod:`~attnkit.attention.steps` as written). ``output.path`` says which
            path ran (``"fused"``, ``"folded"`` or ``"readable"``) and ``output.reason`` why
            the fused kernel did not.
        causal: also mask as :func:`~attnkit.attention.masks.causal_mask`: the fused kernel's
            ``is_causal`` (no mask built) where it runs alone, else combined with ``mask``.
    """
    chosen = dict(score=score, normaliser=normaliser, scale=scale, dropout=dropout, path=path)
    wanted = dict(need_weights=need_weights, return_scores=return_scores)
    settings = AttendSettings(**chosen, **wanted, normaliser_options=normaliser_options)
    query, key, value, mask, reweight, one_head = _with_head_axis(query, key, value, mask, reweight)
    bias = _head_axis(bias, one_head)
    _check(query, key, value, mask, bias)
    mask, causal = _causal(query, key, mask, bias, settings, reweight, causal)
    if fast.applies(settings):  # the same numbers in fewer passes: see fast.py
        out = fast.attend_fast(
            query, key, value, mask, settings, reweight=reweight, bias=bias, causal=causal
        )
    else:
        out = _readable(query, key, value, mask, settings, reweight, bias)
    return _without_head_axis(out, one_head)


def _causal(query, key, mask, bias, settings, reweight, causal: bool):
    """``(mask, causal)``: the flag kept where the fused kernel's ``is_causal`` runs alone
    (equal query and key lengths, as ``is_causal`` aligns the first query with the first key;
    no other mask or bias; a mechanism the kernel computes), else the causal mask built and
    combined with ``mask``."""
    if not causal:
        return mask, False
    tq, tk = query.size(-2), key.size(-2)
    alone = mask is None and bias is None and tq == tk and fast.applies(settings)
    if alone and fast.why_not_fused(settings, reweight) is None:
        return None, True
    return combine(mask, causal_mask(tq, tk, device=query.device)), False


def _readable(query, key, value, mask, settings: AttendSettings, reweight, bias):
    """The four steps as written (:mod:`~attnkit.attention.steps`), for 4-d inputs."""
    key, value = shared_heads(query, key, value, fused=False)  # (B, H, Tk, D) each
    empty = steps.empty_rows(mask)  # (B, H, Tq, 1) rows with no key, or None
    scores = steps.score(query, key, settings, bias)  # 1. score: (B, H, Tq, Tk)
    masked = steps.mask(scores, mask, empty)  # 2. mask
    weights, log_prob = steps.normalise(masked, settings, reweight)  # 3. normalise
    weights, log_prob = steps.empty_row_rule(empty, weights, log_prob)
    context = steps.weighted_sum(weights, value, settings.dropout)  # 4. weighted sum
    weights = weights if settings.need_weights else None
    raw = scores if settings.return_scores else None
    reason = fast.why_not_fused(settings, reweight)
    return AttentionOutput(context, weights, raw, log_prob, path="readable", reason=reason)


def _with_head_axis(query, key, value, mask, reweight):
    """3-d inputs ``(B, T, D)`` as one head ``(B, 1, T, D)``; 4-d inputs unchanged."""
    if query.dim() != key.dim() or key.dim() != value.dim() or query.dim() not in (3, 4):
        raise ValueError(
            "query, key and value must all be 4-d (B, H, T, D) or all 3-d (B, T, D); got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    if query.dim() == 4:
        return query, key, value, mask, reweight, False
    query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)  # (B, 1, T, D)
    if mask is not None and mask.dim() >= 3:
        mask = mask.unsqueeze(-3)  # (B, 1, Tq, Tk)
    if reweight is not None and reweight.dim() >= 3:
        reweight = reweight.unsqueeze(-3)  # (B, 1, Tq, Tk)
    return query, key, value, mask, reweight, True


def _head_axis(bias: Tensor | None, one_head: bool) -> Tensor | None:
    """A ``(B, Tq, Tk)`` bias given with 3-d inputs as ``(B, 1, Tq, Tk)``."""
    return bias.unsqueeze(-3) if one_head and bias is not None and bias.dim() >= 3 else bias


def _check(query, key, value, mask, bias=None) -> None:
    """Clear errors for lengths, the mask and the bias, before any work is done."""
    if bias is not None:
        target = torch.Size((*query.shape[:-1], key.size(-2)))  # (B, H, Tq, Tk)
        if not bias.is_floating_point():
            raise TypeError(f"bias must be a float tensor, got {bias.dtype}; a bool is a mask")
        try:
            fits = torch.broadcast_shapes(bias.shape, target) == target
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(
                f"bias {tuple(bias.shape)} does not broadcast to scores {tuple(target)} "
                "(B, H, Tq, Tk)"
            )
    if key.size(-2) != value.size(-2):
        raise ValueError(f"key and value lengths differ: {key.size(-2)} vs {value.size(-2)}")
    if mask is not None:
        check_mask(mask, torch.Size((*query.shape[:-1], key.size(-2))))  # (B, H, Tq, Tk)


def _without_head_axis(output: AttentionOutput, one_head: bool) -> AttentionOutput:
    """Drop the head axis added by :func:`_with_head_axis`: ``(B, 1, ..) -> (B, ..)``."""
    if one_head:
        output.context = output.context.squeeze(1)  # (B, Tq, Dv)
        for name in ("weights", "scores", "log_prob"):
            tensor = getattr(output, name)
            if tensor is not None:
                setattr(output, name, tensor.squeeze(1))
    return output


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
    bias = options.pop("bias", None)
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
                bias=_rows(bias, start, stop, tq),
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
    last = None
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
        last = out
    context = torch.cat(contexts, dim=-2)  # (B, [H,] Tq, Dv)
    scores = torch.cat(extras["scores"], dim=-2) if extras["scores"] else None
    log_prob = torch.cat(extras["log_prob"], dim=-1) if extras["log_prob"] else None
    reason = f"chunked by {chunk} queries; {last.reason}"
    return AttentionOutput(context, weights_out, scores, log_prob, path=last.path, reason=reason)
