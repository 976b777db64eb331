"""Deletion (erasure) curves: does removing the tokens an importance vector ranks first hurt the
prediction most?

Given a scorer ``score(keep) -> float`` (the target's probability, or any score, computed with
only the tokens where the bool mask ``keep (T,)`` is True) and an importance vector ``(T,)``,
tokens are removed most-important-first, one at a time, and the score is read after each step:
``f(x^(0)), f(x^(1)), ..., f(x^(K))`` where ``x^(k)`` lacks the ``k`` top-ranked tokens. Its
summary is the area over the perturbation curve (Samek et al. 2017, "Evaluating the
Visualization of What a Deep Neural Network Has Learned", eq. (12))::

    AOPC = 1 / (K + 1) * sum_{k=0}^{K} (f(x^(0)) - f(x^(k)))

Each term is DeYoung et al. 2020's *comprehensiveness* (ERASER, §4.2) of the top-``k`` tokens;
ERASER averages it over the bins of 1, 5, 10, 20 and 50 % of the tokens, this averages it over
every ``k`` (``steps`` caps ``K``). A faithful importance drops the score fast, so a larger AOPC
is better; :func:`random_deletion_curve` (random orders, seeded) is the baseline it must beat.
:func:`compare_importances` runs several importance vectors of one input, e.g.
:meth:`attnkit.interpret.attribution.Attribution.importances` (raw attention, rollout,
attention x gradient, gradient rollout), against the same scorer.

Positions that must never be removed (``[CLS]``, ``[SEP]``, a language model's predicting
position) are left out with ``removable (T,)``, a bool mask, True = may be removed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

Scorer = Callable[[np.ndarray], float]  # keep (T,) bool, True = token present -> score


@dataclass
class DeletionCurve:
    """``scores (K + 1,)``: the score with ``0, 1, ..., K`` tokens removed, in ``order (K,)``
    (a random curve: the mean over its orders, ``order`` the first of them)."""

    order: np.ndarray
    scores: np.ndarray

    @property
    def drops(self) -> np.ndarray:
        """``f(x^(0)) - f(x^(k))`` for ``k = 0 .. K``: ``(K + 1,)``."""
        return self.scores[0] - self.scores

    @property
    def aopc(self) -> float:
        """Area over the perturbation curve (Samek et al. 2017, eq. (12)): the mean drop."""
        return float(self.drops.mean())


def _removable(n_tokens: int, removable) -> np.ndarray:
    if removable is None:
        return np.ones(n_tokens, dtype=bool)
    mask = np.asarray(removable, dtype=bool)
    if mask.shape != (n_tokens,):
        raise ValueError(f"removable has shape {mask.shape}; expected ({n_tokens},)")
    return mask


def deletion_order(importance, removable=None) -> np.ndarray:
    """Removable positions, most important first (ties: the earlier position first)."""
    imp = np.asarray(importance, dtype=float)
    if imp.ndim != 1:
        raise ValueError(f"importance must be one score per token (T,), got shape {imp.shape}")
    if not np.isfinite(imp).all():
        raise ValueError("importance has NaN or infinite entries")
    positions = np.flatnonzero(_removable(len(imp), removable))
    return positions[np.argsort(-imp[positions], kind="stable")]


def curve_for_order(score: Scorer, order, n_tokens: int, steps: int | None = None):
    """Scores ``(k + 1,)`` with the first ``0 .. k`` positions of ``order`` removed,
    ``k = min(len(order), steps)``."""
    order = np.asarray(order, dtype=int)[: len(order) if steps is None else steps]
    keep = np.ones(n_tokens, dtype=bool)
    scores = [float(score(keep.copy()))]
    for position in order:
        keep[position] = False
        scores.append(float(score(keep.copy())))
    return np.asarray(scores)


def deletion_curve(
    score: Scorer, importance, removable=None, steps: int | None = None
) -> DeletionCurve:
    """Remove the tokens most-important-first (:func:`deletion_order`) and score each step.

    Args:
        score: ``score(keep (T,) bool) -> float``, the target's score with only the kept tokens.
        importance: ``(T,)``, larger = more important (signed scores are ranked as they are).
        removable: ``(T,)`` bool, True = may be removed; default every position.
        steps: remove at most this many tokens (default all removable ones).
    """
    order = deletion_order(importance, removable)
    order = order if steps is None else order[:steps]
    return DeletionCurve(order, curve_for_order(score, order, len(np.asarray(importance))))


def random_deletion_curve(
    score: Scorer,
    n_tokens: int,
    removable=None,
    seed: int = 0,
    repeats: int = 10,
    steps: int | None = None,
) -> DeletionCurve:
    """The baseline: tokens removed in ``repeats`` random orders (``numpy`` generator seeded with
    ``seed``); ``scores`` is the mean curve, so its AOPC is the mean of the orders' AOPCs."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    rng = np.random.default_rng(seed)
    positions = np.flatnonzero(_removable(n_tokens, removable))
    orders = [rng.permutation(positions)[:steps] for _ in range(repeats)]
    curves = [curve_for_order(score, order, n_tokens) for order in orders]
    return DeletionCurve(orders[0], np.mean(curves, axis=0))  # (K + 1,)


def compare_importances(
    score: Scorer,
    importances: Mapping[str, np.ndarray],
    removable=None,
    seed: int = 0,
    repeats: int = 10,
    steps: int | None = None,
) -> dict[str, DeletionCurve]:
    """The deletion curve of each named importance vector ``(T,)`` of one input, plus
    ``"random"`` (:func:`random_deletion_curve`), all with the same scorer and removable
    positions. Read ``curves[name].aopc``: the larger, the more faithful."""
    if not importances:
        raise ValueError("no importance vectors given")
    if "random" in importances:
        raise ValueError('"random" is the baseline\'s name; call the importance something else')
    lengths = {len(np.asarray(v)) for v in importances.values()}
    if len(lengths) != 1:
        raise ValueError(f"importance vectors of different lengths {sorted(lengths)}")
    curves = {
        name: deletion_curve(score, imp, removable, steps) for name, imp in importances.items()
    }
    curves["random"] = random_deletion_curve(score, lengths.pop(), removable, seed, repeats, steps)
    return curves


__all__ = [
    "DeletionCurve",
    "Scorer",
    "compare_importances",
    "curve_for_order",
    "deletion_curve",
    "deletion_order",
    "random_deletion_curve",
]
