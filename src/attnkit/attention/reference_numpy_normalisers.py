"""Step 3 of the NumPy reference, the normalisers, row by row, written to be read.

Part of :mod:`attnkit.attention.reference_numpy` (which re-exports every name here): each row
of masked scores ``(..., Tq, Tk)`` becomes weights that sum to 1, or to 0 for a row whose keys
are all masked; ``sigmoid`` is the exception, weighing each key on its own. Masked keys arrive
as ``-inf`` and get weight exactly 0.
"""

from __future__ import annotations

import numpy as np

NORMALISERS = ("softmax", "sparsemax", "entmax15", "hard", "sigmoid")


def softmax(z: np.ndarray) -> np.ndarray:
    """``p_i = exp(z_i) / sum_j exp(z_j)`` (Bahdanau et al. 2015, eq. (6)), over the last axis.

    Subtracting the row maximum first changes nothing mathematically and avoids overflow.
    """
    shifted = z - z.max(axis=-1, keepdims=True)
    e = np.exp(shifted)  # exp(-inf) = 0: masked keys get weight 0
    return e / e.sum(axis=-1, keepdims=True)


def sparsemax_row(z: np.ndarray) -> np.ndarray:
    """Sparsemax of one row ``z (Tk,)`` (Martins & Astudillo 2016, Algorithm 1).

    The Euclidean projection of ``z`` onto the probability simplex: ``p_i = max(z_i - tau, 0)``.
    Sort ``z`` in decreasing order; the support holds the ``k`` largest entries, with ``k`` the
    largest index such that ``1 + k z_(k) > sum_{j<=k} z_(j)``; then
    ``tau = (sum_{j<=k} z_(j) - 1) / k``.
    """
    finite = z[np.isfinite(z)]  # masked keys (-inf) are never in the support
    z_sorted = np.sort(finite)[::-1]  # (n,) decreasing
    k = np.arange(1, len(z_sorted) + 1)
    cumulative = np.cumsum(z_sorted)
    in_support = 1 + k * z_sorted > cumulative
    support_size = k[in_support][-1]
    tau = (cumulative[support_size - 1] - 1) / support_size
    return np.maximum(z - tau, 0.0)


def entmax15_row(z: np.ndarray) -> np.ndarray:
    """1.5-entmax of one row ``z (Tk,)``, exactly (Peters, Niculae & Martins 2019, Alg. 2).

    alpha-entmax is ``p_i = [(alpha - 1) z_i - tau]_+^(1/(alpha-1))``; for alpha = 1.5 that is
    ``p_i = [z_i/2 - tau]_+^2`` with ``tau`` chosen so that ``sum p = 1``. If the support is the
    ``k`` largest entries of ``x = z/2``, then ``sum_{i<=k} (x_(i) - tau)^2 = 1`` is a quadratic
    in ``tau`` whose relevant root is ``tau_k = mean_k - sqrt((1 - ss_k) / k)``, where ``mean_k``
    and ``ss_k`` are the mean and the sum of squared deviations of the ``k`` largest ``x``. The
    support is the largest ``k`` with ``tau_k <= x_(k)``.
    """
    x = z / 2
    x_sorted = np.sort(x[np.isfinite(x)])[::-1]  # (n,) decreasing
    k = np.arange(1, len(x_sorted) + 1)
    mean = np.cumsum(x_sorted) / k
    mean_of_squares = np.cumsum(x_sorted**2) / k
    ss = k * (mean_of_squares - mean**2)  # sum of squared deviations from the mean
    tau = mean - np.sqrt(np.maximum((1 - ss) / k, 0.0))
    support_size = k[tau <= x_sorted][-1]
    return np.maximum(x - tau[support_size - 1], 0.0) ** 2


def hard_row(z: np.ndarray) -> np.ndarray:
    """One-hot at the highest score (hard attention, Xu et al. 2015 §4, deterministic form)."""
    one_hot = np.zeros_like(z)
    one_hot[np.argmax(z)] = 1.0  # the first maximum on ties, as torch.argmax
    return one_hot


def sigmoid(z: np.ndarray) -> np.ndarray:
    """``p_i = 1 / (1 + exp(-z_i))`` (Oktay et al. 2018, eq. (2)), entry by entry.

    Independent gates, not a distribution: no entry looks at the others. ``exp(inf) = inf``
    gives masked keys (``-inf``) weight exactly 0; a very negative ``z`` overflows ``exp`` to
    ``inf`` on purpose, which gives the right limit 0.
    """
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


def normalise(scores: np.ndarray, name: str = "softmax") -> np.ndarray:
    """Apply the normaliser ``name`` (one of :data:`NORMALISERS`) to every row of ``scores``."""
    if name == "softmax":
        return softmax(scores)
    if name == "sigmoid":
        return sigmoid(scores)
    per_row = {"sparsemax": sparsemax_row, "entmax15": entmax15_row, "hard": hard_row}
    if name not in per_row:
        raise ValueError(f"unknown normaliser {name!r}; choose one of {NORMALISERS}")
    return np.apply_along_axis(per_row[name], -1, scores)


def normalise_masked(masked_scores: np.ndarray, mask, name: str = "softmax") -> np.ndarray:
    """Normalise rows, giving a row whose keys are all masked zero weights (not NaN)."""
    if mask is None:
        return normalise(masked_scores, name)
    has_key = np.broadcast_to(mask, masked_scores.shape).any(axis=-1, keepdims=True)  # (.., Tq, 1)
    safe = np.where(has_key, masked_scores, 0.0)  # an all -inf row would give NaN
    return np.where(has_key, normalise(safe, name), 0.0)
