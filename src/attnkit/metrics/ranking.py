"""Top-k ranking scores for next-item recommendation, one relevant item per user (the held-out
target), from the target's 0-based rank among the candidates (Kang & McAuley 2018, Sec. IV-B;
Krichene & Rendle 2020 on sampled against full ranking).

- :func:`rank_of_target`: the number of candidates scored strictly higher than the target, so
  0 is the top. **Ties go to the target** (optimistic): a candidate scored exactly as the
  target does not push it down. The SASRec authors (``util.evaluate`` in kang205/SASRec and
  pmixer/SASRec.pytorch) put the target first among the candidates and take
  ``(-scores).argsort().argsort()[0]``; NumPy's default sort is not stable, so there a tie
  falls either way; a stable sort with the target first gives exactly this rule. A model
  that scores everything alike ranks every target 0 under it: ``ties="pessimistic"`` counts
  the tied candidates against the target instead, to check a model for that.
- :func:`hit_rate_at_k`: the share of users whose target ranks within the top ``k``,
  ``mean(rank < k)`` (HR@k, the paper's "Hit@10"; with one relevant item, recall@k).
- :func:`ndcg_at_k`: ``mean(1 / log2(rank + 2) if rank < k else 0)``; with one relevant item
  the ideal DCG is 1, so this is the DCG (NDCG@10 in the paper).
- :func:`mrr`: mean reciprocal rank, ``mean(1 / (rank + 1))``, over all ranks (or 0 beyond an
  optional cut ``k``).
- :func:`ranking_scores`: the three at once, as :class:`RankingScores`.

Ranks are 0-based integers; a list, a NumPy array or a torch tensor (detached) is accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

TIES = ("optimistic", "pessimistic")


@dataclass(frozen=True)
class RankingScores:
    """HR@k, NDCG@k and MRR over ``users`` targets, at cut ``k``."""

    k: int
    hit_rate: float
    ndcg: float
    mrr: float
    users: int


def _array(values) -> np.ndarray:
    """``values`` as a NumPy array (torch tensors detached and moved to the CPU)."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values)


def _ranks(ranks: Sequence[int] | np.ndarray) -> np.ndarray:
    """0-based ranks as a flat int array, or a ValueError saying what is wrong."""
    found = _array(ranks).reshape(-1)
    if found.size == 0:
        raise ValueError("no ranks to score: give one 0-based rank per evaluated user")
    if not np.issubdtype(found.dtype, np.integer):
        if not np.all(np.isfinite(found)) or np.any(found != np.round(found)):
            raise ValueError("ranks must be whole numbers (0 = the target is first)")
        found = found.astype(np.int64)
    if found.min() < 0:
        raise ValueError(f"ranks are 0-based counts and cannot be negative, got {found.min()}")
    return found


def _cut(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive whole number, got {k!r}")
    return int(k)


def rank_of_target(
    scores,
    target_index: int | Sequence[int] | np.ndarray = 0,
    ties: Literal["optimistic", "pessimistic"] = "optimistic",
) -> int | np.ndarray:
    """The target's 0-based rank: how many candidates score strictly higher than it
    (``ties="optimistic"``, the default; module docstring), or higher or equal, itself not
    counted (``"pessimistic"``).

    ``scores``: ``(N,)`` one user's candidates, or ``(B, N)`` a batch (NumPy or torch);
    ``target_index``: the target's column, one int for every row or ``(B,)``. Returns an int
    for ``(N,)``, an int64 array ``(B,)`` for ``(B, N)``. NaN scores are an error (they compare
    false both ways, so would hide a broken model).
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    matrix = _array(scores).astype(float)
    single = matrix.ndim == 1
    matrix = matrix[None] if single else matrix  # (B, N)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise ValueError(f"scores must be (N,) or (B, N) with N >= 1, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ValueError("scores contain NaN: ranks would be meaningless")
    index = np.broadcast_to(_array(target_index), (matrix.shape[0],))
    if np.any(index < 0) or np.any(index >= matrix.shape[1]):
        raise ValueError(f"target_index must lie in [0, {matrix.shape[1]}), got {index}")
    target = matrix[np.arange(matrix.shape[0]), index][:, None]  # (B, 1)
    if ties == "optimistic":
        ranks = (matrix > target).sum(axis=1)  # (B,)
    else:
        ranks = (matrix >= target).sum(axis=1) - 1  # (B,) the target itself not counted
    ranks = ranks.astype(np.int64)
    return int(ranks[0]) if single else ranks


def hit_rate_at_k(ranks: Sequence[int] | np.ndarray, k: int = 10) -> float:
    """HR@k: the share of targets with ``rank < k`` (0-based ranks)."""
    return float(np.mean(_ranks(ranks) < _cut(k)))


def ndcg_at_k(ranks: Sequence[int] | np.ndarray, k: int = 10) -> float:
    """NDCG@k with one relevant item: ``mean(1 / log2(rank + 2))`` over targets with
    ``rank < k``, 0 for the others (Kang & McAuley 2018, Sec. IV-B)."""
    found = _ranks(ranks)
    gains = np.where(found < _cut(k), 1.0 / np.log2(found + 2.0), 0.0)
    return float(np.mean(gains))


def mrr(ranks: Sequence[int] | np.ndarray, k: int | None = None) -> float:
    """Mean reciprocal rank ``mean(1 / (rank + 1))``; with ``k``, ranks ``>= k`` count 0."""
    found = _ranks(ranks)
    reciprocal = 1.0 / (found + 1.0)
    if k is not None:
        reciprocal = np.where(found < _cut(k), reciprocal, 0.0)
    return float(np.mean(reciprocal))


def ranking_scores(ranks: Sequence[int] | np.ndarray, k: int = 10) -> RankingScores:
    """HR@k, NDCG@k and (uncut) MRR of the same ranks."""
    found = _ranks(ranks)
    return RankingScores(
        _cut(k), hit_rate_at_k(found, k), ndcg_at_k(found, k), mrr(found), found.size
    )
