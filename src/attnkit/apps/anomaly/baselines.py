"""Streaming (causal) scores without learning: NAB's windowed-Gaussian detector and the anomaly
likelihood that turns any raw score into a probability-like one.

Both produce at row ``t`` a value computed from rows ``<= t`` only.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfc


def gaussian_tail(z: np.ndarray) -> np.ndarray:
    """``Q(z) = P(Z > z) = erfc(z / sqrt 2) / 2`` for a standard normal ``Z``."""
    return 0.5 * erfc(np.asarray(z) / np.sqrt(2.0))


def _window_stats(x: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """Mean and population std of ``x[starts[i]:ends[i]]`` from cumulative sums."""
    shifted = x - x[0]  # keeps the cumulative sums well conditioned
    c1 = np.concatenate([[0.0], np.cumsum(shifted)])
    c2 = np.concatenate([[0.0], np.cumsum(shifted * shifted)])
    n = np.maximum(ends - starts, 1)
    mean = (c1[ends] - c1[starts]) / n
    var = np.maximum((c2[ends] - c2[starts]) / n - mean * mean, 0.0)
    return mean + x[0], np.sqrt(var)


def windowed_gaussian(values: np.ndarray, window: int = 6400, step: int = 100) -> np.ndarray:
    """NAB's windowed-Gaussian detector (``nab/detectors/gaussian``), vectorised.

    The score of row ``t`` is ``1 - Q(|x_t - mu| / sd)`` where ``mu, sd`` are the mean and
    population standard deviation of the window held after row ``t - 1``: all rows so far until
    the window holds ``window`` rows, after which it moves forward ``step`` rows at a time
    (``sd = 0`` is replaced by ``1e-6``). Row 0 scores 0.

    Args:
        values: ``(T,)``.
    Returns:
        ``(T,)`` scores in ``[0.5, 1]`` (0 for row 0).
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    t = np.arange(len(x))
    seen = t  # rows appended before row t
    ends = np.where(seen <= window, seen, window + step * ((seen - window) // step))
    starts = np.maximum(ends - window, 0)
    mean, sd = _window_stats(x, starts, ends)
    sd = np.where(sd <= 1e-12 * np.maximum(np.abs(mean), 1.0), 1e-6, sd)
    score = 1.0 - gaussian_tail(np.abs(x - mean) / sd)
    score[0] = 0.0
    return score


def anomaly_likelihood(
    raw: np.ndarray,
    *,
    long_window: int = 8640,
    short_window: int = 10,
    warmup: int = 0,
    log_scale: bool = True,
    of_averages: bool = False,
) -> np.ndarray:
    """Anomaly likelihood of a raw score stream (Ahmad et al. 2017, "Unsupervised real-time
    anomaly detection for streaming data", eqs. (3)-(5)).

    ``L_t = 1 - Q((mu~_t - mu_t) / sigma_t)`` where ``mu_t, sigma_t`` are the mean and std of the
    last ``long_window`` raw scores before ``t`` and ``mu~_t`` the mean of the last
    ``short_window`` scores up to ``t``. The first ``warmup`` rows score 0.5.

    With ``of_averages`` ``mu_t, sigma_t`` are those of the last ``long_window`` short-window
    means ``mu~`` instead of the raw scores, as Numenta's code does (nupic
    ``anomaly_likelihood``: ``estimateNormal`` is fitted to the moving averages): averaging
    shrinks the spread of ``mu~``, which the paper's raw-score ``sigma_t`` does not follow, so
    a sustained rise in the raw score stands out more.

    With ``log_scale`` the result is NAB's ``computeLogLikelihood``: ``log(1.0000000001 - L) /
    log(1 - 0.9999999999)``, monotone in ``L``, which spreads the values near 1.
    """
    s = np.asarray(raw, dtype=np.float64).reshape(-1)
    t = np.arange(len(s))
    c = np.concatenate([[0.0], np.cumsum(s)])
    lo = np.maximum(t + 1 - short_window, 0)
    short = (c[t + 1] - c[lo]) / (t + 1 - lo)  # mu~_t: mean of rows t - W' + 1 .. t
    ends = t  # statistics of the rows before t
    starts = np.maximum(ends - long_window, 0)
    mean, sd = _window_stats(short if of_averages else s, starts, np.maximum(ends, 1))
    sd = np.maximum(sd, 1e-4 * np.maximum(np.abs(mean), 1e-3))
    likelihood = 1.0 - gaussian_tail((short - mean) / sd)
    likelihood[: max(warmup, 2)] = 0.5
    return log_likelihood(likelihood) if log_scale else likelihood


def log_likelihood(likelihood: np.ndarray) -> np.ndarray:
    """NAB's ``computeLogLikelihood``: ``log(1.0000000001 - L) / log(1 - 0.9999999999)``, monotone
    in ``L`` and in ``[0, 1]``; ``0.5`` is ``L = 0.99999``, ``0.3`` is ``L = 0.999``."""
    return np.log(1.0000000001 - np.asarray(likelihood)) / np.log(1.0 - 0.9999999999)


def suppress_alerts(
    score: np.ndarray, *, threshold: float = 0.5, rows: int = 1, floor: float = 0.3
) -> np.ndarray:
    """Keep the first alert of each burst: a row whose score is ``>= threshold`` is lowered to
    ``floor`` when any of the ``rows`` rows before it scored ``>= threshold`` too.

    With ``rows=1`` and the log-scale likelihood's ``threshold=0.5`` (``L = 0.99999``) and
    ``floor=0.3`` (``L = 0.999``) this is the filter Numenta's HTM detector applies in NAB
    (nupic ``anomaly_likelihood._filterLikelihoods``: only the onset of a red-zone run stays
    red). NAB rewards only a window's earliest detection and charges every false positive
    (Lavin & Ahmad 2015, §IV): once a burst is flagged, its later rows earn nothing
    inside a window and cost outside one. ``rows > 1`` also
    silences alerts within ``rows`` of an earlier one (a refractory period). The test is on
    the input scores, so the output at row ``t`` uses rows ``<= t`` only.

    Args:
        score: ``(T,)`` scores, higher = more anomalous.
        threshold: the alert level (in ``score``'s units).
        rows: how far back an earlier alert silences this one; ``0`` returns ``score`` as is.
        floor: the value a silenced row gets (below ``threshold``).
    Returns:
        ``(T,)`` scores.
    """
    s = np.asarray(score, dtype=np.float64).reshape(-1)
    if rows <= 0:
        return s.copy()
    if floor >= threshold:
        raise ValueError(f"floor ({floor}) must be below threshold ({threshold})")
    hit = s >= threshold
    counts = np.concatenate([[0], np.cumsum(hit)])  # counts[t] = alerts in rows < t
    t = np.arange(len(s))
    earlier = counts[t] - counts[np.maximum(t - rows, 0)]  # alerts in rows t - rows .. t - 1
    return np.where(hit & (earlier > 0), floor, s)
