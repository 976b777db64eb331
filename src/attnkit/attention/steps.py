"""The four steps of attention, the empty-row rule, and the settings that choose them.

    scores  = score(query, key)          # (B, H, Tq, Tk)
    scores  = mask(scores, mask, empty)  # -inf where the mask is False
    weights = normalise(scores)          # softmax, sparsemax, ...
    weights = empty_row_rule(weights)    # a query with no key: zero weights, never NaN
    context = weighted_sum(weights, v)   # (B, H, Tq, Dv)

:func:`attnkit.attention.attend`'s readable path is exactly this composition. The fast
dispatch (:mod:`attnkit.attention.fast`) substitutes a step where it can do the same work in
fewer passes (the fused kernel for all four; one ``baddbmm`` for score and mask) and calls
these functions for every step it does not substitute.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch.nn.functional as F
from torch import Tensor

from attnkit.attention.normalisers import resolve_normaliser
from attnkit.attention.scores import resolve_score

NEG_INF = float("-inf")
PATHS = ("auto", "readable")


@dataclass(frozen=True, kw_only=True)
class AttendSettings:
    """How :func:`~attnkit.attention.attend` attends: one field per choice (its keywords).

    ``path``: ``"auto"`` lets the fast dispatch substitute steps where the numbers stay the
    same; ``"readable"`` runs the four steps of this module as written.
    """

    score: object = "scaled_dot"
    normaliser: object = "softmax"
    scale: float | None = None
    dropout: float = 0.0
    need_weights: bool = True
    return_scores: bool = False
    normaliser_options: dict | None = None
    path: str = "auto"

    def __post_init__(self) -> None:
        if self.scale is not None and self.score != "scaled_dot":
            raise ValueError(f"scale applies only to score='scaled_dot', not to {self.score!r}")
        if self.path not in PATHS:
            raise ValueError(f"path must be one of {PATHS}, got {self.path!r}")


def score(query: Tensor, key: Tensor, settings: AttendSettings, bias: Tensor | None) -> Tensor:
    """Step 1, the scores ``(B, H, Tq, Tk)``: ``q k^T / sqrt(d_k)`` for ``scaled_dot``
    (Vaswani et al. 2017, eq. (1)), ``q k^T`` for ``dot`` (Luong et al. 2015, eq. (8)), or a
    learned score such as ``v^T tanh(W q + U k)`` (Bahdanau et al. 2015, App. A.1.2); plus
    ``bias`` ``(.., Tq, Tk)``, the position term of relative attention (Shaw et al. 2018)."""
    scores = resolve_score(settings.score, settings.scale)(query, key)  # (B, H, Tq, Tk)
    return scores if bias is None else scores + bias


def empty_rows(mask: Tensor | None) -> Tensor | None:
    """The query rows ``(.., Tq, 1)`` whose keys are all masked, or None when there are none.

    Without a mask there are none. On the CPU a mask with a key in every row (the usual case)
    also gives None, so the row fixes are skipped; elsewhere reading the answer would
    synchronise the device, so the fixes always run."""
    if mask is None:
        return None
    has_key = mask.any(dim=-1, keepdim=True)  # (.., Tq, 1)
    return None if has_key.device.type == "cpu" and bool(has_key.all()) else ~has_key


def mask(scores: Tensor, mask: Tensor | None, empty: Tensor | None) -> Tensor:
    """Step 2, the scores with ``-inf`` where ``mask`` (bool, True = may attend) is False, so
    the normaliser gives those keys weight 0 (Vaswani et al. 2017, §3.2.3). The ``empty`` rows
    (:func:`empty_rows`) stay finite, so that no normaliser sees a row of ``-inf`` (NaN)."""
    if mask is None:
        return scores
    return scores.masked_fill(~mask if empty is None else ~mask & ~empty, NEG_INF)


def normalise(
    scores: Tensor, settings: AttendSettings, reweight: Tensor | None
) -> tuple[Tensor, Tensor | None]:
    """Step 3, ``(weights, log_prob)`` ``(B, H, Tq, Tk)``, ``(B, H, Tq)``: the normaliser over
    the keys (softmax: Bahdanau et al. 2015, eq. (6); sparsemax: Martins & Astudillo 2016),
    times ``reweight`` when given (local-p's Gaussian, Luong et al. 2015, eq. (10));
    ``log_prob`` only from a sampling normaliser (Xu et al. 2015, §4.1), else None."""
    normalised = resolve_normaliser(settings.normaliser, settings.normaliser_options)(scores)
    weights, log_prob = normalised if isinstance(normalised, tuple) else (normalised, None)
    return (weights if reweight is None else weights * reweight), log_prob


def empty_row_rule(
    empty: Tensor | None, weights: Tensor, log_prob: Tensor | None = None
) -> tuple[Tensor, Tensor | None]:
    """The empty-row rule: a query row with no key to attend (``empty``, ``(.., Tq, 1)``, from
    :func:`empty_rows`) gets zero weights, so a zero context, and a zero log-prob, never NaN.

    ``weights`` is ``(.., Tq, Tk)`` (or a context ``(.., Tq, Dv)``); ``log_prob`` ``(.., Tq)``.
    """
    if empty is None:
        return weights, log_prob
    log_prob = None if log_prob is None else log_prob.masked_fill(empty.squeeze(-1), 0.0)
    return weights.masked_fill(empty, 0.0), log_prob


def weighted_sum(weights: Tensor, value: Tensor, dropout: float) -> Tensor:
    """Step 4, the context ``(B, H, Tq, Dv) = weights @ value``: ``sum_j a_ij v_j``
    (Bahdanau et al. 2015, eq. (5); Vaswani et al. 2017, eq. (1)), with dropout on the
    weights in training (Vaswani et al. 2017, §5.4)."""
    dropped = F.dropout(weights, dropout) if dropout > 0 else weights
    return dropped @ value  # (B, H, Tq, Dv)
