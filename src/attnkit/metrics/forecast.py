"""Forecast accuracy and tests of equal predictive accuracy.

* :func:`mape` and :func:`r2`: mean absolute percentage error (Hyndman & Koehler 2006, "Another
  look at measures of forecast accuracy", IJF 22) and the coefficient of determination.
* :func:`diebold_mariano`: the Diebold & Mariano 1995 test ("Comparing predictive accuracy",
  JBES 13) with the small-sample correction of Harvey, Leybourne & Newbold 1997 ("Testing the
  equality of prediction mean squared errors", IJF 13).
* :func:`corrected_resampled_ttest`: the corrected resampled t-test of Nadeau & Bengio 2003
  ("Inference for the generalization error", Machine Learning 52), for scores of two models over
  repeated random train/test splits.

All arithmetic is in float64. Only numpy and ``scipy.stats`` (Student t tails) are needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["DMTest", "TTest", "corrected_resampled_ttest", "diebold_mariano", "mape", "r2"]


@dataclass(frozen=True)
class DMTest:
    """Result of :func:`diebold_mariano`. A negative statistic means model a has the lower loss."""

    statistic: float  # HLN-corrected DM statistic, compared with Student t(n - 1)
    p_value: float  # two-sided
    mean_difference: float  # mean of d_t = |e_a|^power - |e_b|^power
    n: int
    horizon: int


@dataclass(frozen=True)
class TTest:
    """Result of :func:`corrected_resampled_ttest`."""

    statistic: float  # compared with Student t(folds - 1)
    p_value: float  # two-sided
    mean: float  # mean of the per-fold differences
    folds: int


def _pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs as float64 arrays of one shape, not empty."""
    a = np.asarray(y_true, dtype=np.float64)
    b = np.asarray(y_pred, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"y_true has shape {a.shape} but y_pred has shape {b.shape}")
    if a.size == 0:
        raise ValueError("y_true and y_pred are empty")
    return a, b


def _scalar(value: np.ndarray) -> np.ndarray | float:
    """A 0-d result as a Python float, anything else unchanged."""
    return float(value) if np.ndim(value) == 0 else value


def mape(y_true, y_pred, axis: int | None = 0) -> np.ndarray | float:
    """Mean absolute percentage error in percent, along ``axis``.

    Hyndman & Koehler 2006 (percentage errors): with p_t = 100 e_t / y_t,
    ``MAPE = mean(|p_t|) = 100 * mean(|y_t - ŷ_t| / |y_t|)``.
    Undefined where y_t = 0, which is an error here (not clipped, as scikit-learn does).

    Returns a float for 1-D input (or ``axis=None``), else one value per remaining index (per
    column for 2-D input and ``axis=0``).
    """
    y, yhat = _pair(y_true, y_pred)
    zeros = y == 0
    if zeros.any():
        first = tuple(int(i) for i in np.argwhere(zeros)[0])
        where = first[0] if len(first) == 1 else first
        raise ValueError(
            f"MAPE is undefined where y_true is 0: {int(zeros.sum())} zero value(s) in y_true, "
            f"the first at index {where}"
        )
    return _scalar(100.0 * np.mean(np.abs(y - yhat) / np.abs(y), axis=axis))


def r2(y_true, y_pred, axis: int | None = 0) -> np.ndarray | float:
    """Coefficient of determination ``R² = 1 - SS_res / SS_tot`` along ``axis``.

    ``SS_res = Σ (y_t - ŷ_t)²`` and ``SS_tot = Σ (y_t - ȳ)²``, ȳ the mean of y_true along
    ``axis`` (the usual definition, e.g. scikit-learn's ``r2_score``). Can be negative when the
    forecast is worse than the constant ȳ. A float for 1-D input, else one value per column.
    """
    y, yhat = _pair(y_true, y_pred)
    count = y.size if axis is None else y.shape[axis]
    if count < 2:
        raise ValueError(f"R² needs at least 2 values along the axis, got {count}")
    ss_res = np.sum((y - yhat) ** 2, axis=axis)
    ss_tot = np.sum((y - np.mean(y, axis=axis, keepdims=True)) ** 2, axis=axis)
    if np.any(ss_tot == 0):
        raise ValueError("R² is undefined for a constant y_true (total sum of squares is 0)")
    return _scalar(1.0 - ss_res / ss_tot)


def _autocovariance(d: np.ndarray, lag: int) -> float:
    """gamma_k = (1/n) Σ_{t=k+1..n} (d_t - d̄)(d_{t-k} - d̄): the 1/n estimator of DM 1995."""
    c = d - d.mean()
    return float(np.dot(c[lag:], c[: c.size - lag]) / c.size)


def _two_sided(statistic: float, df: int) -> float:
    return float(2.0 * stats.t.sf(abs(statistic), df))


def diebold_mariano(errors_a, errors_b, horizon: int = 1, power: int | float = 2) -> DMTest:
    """Diebold & Mariano 1995 test of equal predictive accuracy, with the HLN 1997 correction.

    Loss differential ``d_t = |e_a,t|^power - |e_b,t|^power`` (power 2: squared error, 1:
    absolute error). Diebold & Mariano 1995, statistic S1: ``S1 = d̄ / sqrt(f̂ / n)``, where
    the long-run variance f̂ of d uses the truncated (rectangular) kernel up to lag h - 1, as
    h-step-ahead forecast errors are at most MA(h - 1):
    ``f̂ = gamma_0 + 2 Σ_{k=1..h-1} gamma_k``, gamma_k with 1/n normalisation.

    Harvey, Leybourne & Newbold 1997, modified statistic S1*: S1 is multiplied by
    ``sqrt((n + 1 - 2h + h(h - 1)/n) / n)`` and compared with Student t on n - 1 degrees of
    freedom; the p-value is two-sided. With h = 1 the result is exactly the one-sample t-test of
    d against 0.

    If the truncated estimate f̂ is not positive (it can be, for h > 1, with strongly negative
    autocovariances), the test falls back to ``f̂ = gamma_0``, i.e. ignores the
    autocorrelation; the HLN factor for the given h is still applied.

    A negative statistic means model a has the smaller loss.
    """
    ea = np.asarray(errors_a, dtype=np.float64).ravel()
    eb = np.asarray(errors_b, dtype=np.float64).ravel()
    if ea.size != eb.size:
        raise ValueError(f"errors_a has {ea.size} values but errors_b has {eb.size}")
    n = int(ea.size)
    if n < 3:
        raise ValueError(f"the Diebold-Mariano test needs at least 3 forecast errors, got {n}")
    if int(horizon) != horizon or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon}")
    h = int(horizon)
    if h >= n:
        raise ValueError(f"horizon {h} must be smaller than the number of errors {n}")
    d = np.abs(ea) ** power - np.abs(eb) ** power
    if np.all(d == 0):
        raise ValueError(
            "the two forecasts' losses are identical (loss differential is 0 everywhere)"
        )
    gamma0 = _autocovariance(d, 0)
    if np.ptp(d) == 0 or gamma0 <= 0:
        raise ValueError("the loss differential is constant, so its variance is 0")
    lrv = gamma0 + 2.0 * sum(_autocovariance(d, k) for k in range(1, h))
    if lrv <= 0:
        lrv = gamma0
    mean = float(d.mean())
    dm = mean / np.sqrt(lrv / n)
    hln = np.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)
    statistic = float(dm * hln)
    return DMTest(statistic, _two_sided(statistic, n - 1), mean, n, h)


def corrected_resampled_ttest(differences, n_train: int, n_test: int) -> TTest:
    """Corrected resampled t-test of Nadeau & Bengio 2003 (Machine Learning 52).

    ``differences`` holds, per train/test split j = 1..J, the difference of the two models'
    scores. The naive resampled t-test underestimates the variance because the splits overlap;
    Nadeau & Bengio replace the factor 1/J of the variance of the mean by
    ``1/J + n_test/n_train`` (their corrected resampled t statistic)::

        t = mean(d) / sqrt((1/J + n_test/n_train) * var(d, ddof=1))

    compared with Student t on J - 1 degrees of freedom; the p-value is two-sided.
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    folds = int(d.size)
    if folds < 2:
        raise ValueError(f"the corrected resampled t-test needs at least 2 folds, got {folds}")
    if not n_train > 0 or not n_test > 0:
        raise ValueError(f"n_train and n_test must be positive, got {n_train} and {n_test}")
    variance = float(np.var(d, ddof=1))
    if np.ptp(d) == 0 or variance == 0:
        raise ValueError("the differences have zero variance (all folds give the same value)")
    mean = float(d.mean())
    statistic = mean / np.sqrt((1.0 / folds + n_test / n_train) * variance)
    statistic = float(statistic)
    return TTest(statistic, _two_sided(statistic, folds - 1), mean, folds)
