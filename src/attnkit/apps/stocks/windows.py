"""The paper's preprocessing (Koenigstein 2023, §4; its ``customdslib/preprocessing.py``):
log prices, z-scores with the training split's statistics, chronological splits, and windows
of ``T`` input days with the next ``horizon`` prices as targets.

Days ``[0, n_train)`` train, ``[n_train, n_train + n_valid)`` validate, the rest test (the
paper's 70 / 20 / 10); windows are cut inside each split, so no target crosses a split's end.
Forecasts go back to prices with :meth:`Scaling.prices`, where MAPE and R² are measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attnkit.apps.stocks.series import PriceSeries, StockDataError
from attnkit.textfiles import where


@dataclass
class Scaling:
    """``z = (log(price) - mean) / std`` for the price (column 0), ``(x - mean) / std`` for the
    other features; ``mean`` and ``std`` are ``(F,)``, from the training days only. ``low`` and
    ``high`` ``(F,)``: the training days' smallest and largest ``z`` per feature (``None`` in
    runs written before they were kept), the range outside which forecasts extrapolate."""

    mean: np.ndarray
    std: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None

    @classmethod
    def fit(cls, logged: np.ndarray) -> Scaling:
        """Statistics of ``logged (T, F)`` (price column already logged)."""
        std = logged.std(axis=0, ddof=1)
        scaling = cls(logged.mean(axis=0), np.where(std > 0, std, 1.0))
        z = scaling.transform(logged)  # (T, F)
        scaling.low, scaling.high = z.min(axis=0), z.max(axis=0)
        return scaling

    def transform(self, logged: np.ndarray) -> np.ndarray:
        return (logged - self.mean) / self.std  # (T, F)

    def prices(self, z: np.ndarray) -> np.ndarray:
        """Standardised log prices (any shape) back to prices."""
        return np.exp(np.asarray(z, dtype=np.float64) * self.std[0] + self.mean[0])

    def to_dict(self) -> dict:
        d = {"mean": self.mean.tolist(), "std": self.std.tolist()}
        if self.low is not None and self.high is not None:
            d.update(low=self.low.tolist(), high=self.high.tolist())
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Scaling:
        """The scaling ``to_dict`` wrote; ``low``/``high`` only where both were kept."""
        ranged = "low" in d and "high" in d
        low, high = (np.asarray(d[k], np.float64) if ranged else None for k in ("low", "high"))
        return cls(
            np.asarray(d["mean"], dtype=np.float64), np.asarray(d["std"], np.float64), low, high
        )


def log_prices(series: PriceSeries) -> np.ndarray:
    """``series.values`` with the price column logged, ``(T, F)``; a price <= 0 is an error
    naming its line."""
    values = series.values.astype(np.float64).copy()
    bad = np.flatnonzero(values[:, 0] <= 0)
    if bad.size:
        i = int(bad[0])
        raise StockDataError(
            f"{where(series.source, int(series.lines[i]) or None, series.columns[0])}: price "
            f"{values[i, 0]!r} is not positive; log prices need prices > 0 ({bad.size} such rows)"
        )
    values[:, 0] = np.log(values[:, 0])
    return values


@dataclass
class Windows:
    """``x (N, T, F)`` standardised inputs, ``y (N, horizon)`` standardised log prices of the
    next days, ``last (N,)`` each window's last input day (an index into the series)."""

    x: np.ndarray
    y: np.ndarray
    last: np.ndarray

    def __len__(self) -> int:
        return len(self.x)


def cut_windows(z: np.ndarray, start: int, stop: int, window: int, horizon: int) -> Windows:
    """Every window inside days ``[start, stop)`` of ``z (T, F)``: inputs ``[t - T + 1, t]``,
    targets the price on days ``t + 1 .. t + horizon``."""
    lasts = np.arange(start + window - 1, stop - horizon)  # (N,)
    if lasts.size == 0:
        return Windows(np.zeros((0, window, z.shape[1])), np.zeros((0, horizon)), lasts)
    inputs = lasts[:, None] + np.arange(-window + 1, 1)  # (N, T)
    targets = lasts[:, None] + np.arange(1, horizon + 1)  # (N, horizon)
    return Windows(z[inputs], z[targets, 0], lasts)


def input_windows(z: np.ndarray, window: int, horizon: int) -> Windows:
    """Windows of ``z (T, F)`` ending on every day from ``window - 1`` to the last, for new
    data whose next prices are unknown: targets ``(N, horizon)`` are NaN."""
    lasts = np.arange(window - 1, len(z))  # (N,)
    inputs = lasts[:, None] + np.arange(-window + 1, 1)  # (N, T)
    return Windows(z[inputs], np.full((len(lasts), horizon), np.nan), lasts)


def split_days(n: int, shares: tuple[float, float]) -> tuple[int, int]:
    """Training and validation days of ``n`` for ``shares`` (train, valid); the rest test.

    Each boundary is ``floor(n * cumulative share)``, computed once in exact fractions of the
    shares as written (``0.7`` is 7/10): in floats ``0.7 + 0.2`` is ``0.8999999999999999`` and
    ``90 * 0.7`` is ``62.99999999999999``, which moved a day from one split to the next."""
    train, valid = (Fraction(repr(float(s))) for s in shares)
    n_train = math.floor(n * train)
    n_valid = math.floor(n * (train + valid)) - n_train
    return n_train, n_valid


def holdout_days(known: int, shares: tuple[float, float]) -> tuple[int, int]:
    """Training and validation days of the ``known`` days up to a holdout date, in the ratio
    of ``shares`` (0.7 : 0.2 gives 7/9 and 2/9), in exact fractions as :func:`split_days`."""
    train, valid = (Fraction(repr(float(s))) for s in shares)
    n_train = math.floor(known * train / (train + valid))
    return n_train, known - n_train


def make_splits(
    series: PriceSeries,
    shares: tuple[float, float],
    window: int,
    horizon: int,
    known: int | None = None,
) -> tuple[Scaling, dict[str, Windows]]:
    """The scaling (training days' statistics) and ``{"train", "valid", "test"}`` windows.
    ``known``: the days up to a holdout date (:func:`holdout_days`); the test windows are then
    every window whose forecast days all come after them (inputs may reach back before)."""
    logged = log_prices(series)
    if known is None:
        n_train, n_valid = split_days(len(series), shares)
    else:
        n_train, n_valid = holdout_days(known, shares)
    if n_train < window + horizon + 1:
        raise StockDataError(
            f"{series.source}: {n_train} training days cannot hold one window of {window} days "
            f"plus {horizon} to forecast; use more data or a larger training share"
        )
    scaling = Scaling.fit(logged[:n_train])
    z = scaling.transform(logged)
    test_start = n_train + n_valid if known is None else known - window  # >= 0: see above
    bounds = {
        "train": (0, n_train),
        "valid": (n_train, n_train + n_valid),
        "test": (test_start, len(series)),
    }
    return scaling, {k: cut_windows(z, a, b, window, horizon) for k, (a, b) in bounds.items()}
