"""Inputs outside the training range: one warning per feature, naming it and how far.

A network trained on standardised inputs that stayed inside ``[low, high]`` (the training
days' smallest and largest ``z`` per feature, kept in the run's :class:`Scaling`) has never
seen values beyond them; its saturating units cannot follow prices that break out, and a level
forecast there is extrapolation (on AMZN's later days, z of the log price 2.6-3.6 against at
most 2.0 in training, the level-forecasting models' MAPE rose from about 1 % to 13-32 %).
"""

from __future__ import annotations

import numpy as np

from attnkit.apps.stocks.config import StockDataConfig
from attnkit.apps.stocks.windows import Scaling

# an overshoot below the precision a note shows (z to two decimals) is not one: the training
# days written with fewer digits and read back stay inside
TOLERANCE = 0.005


def feature_labels(data: StockDataConfig) -> list[str]:
    """The run's feature columns as a person names them: ``AMZN close`` for the paper's file
    (and a ``csv`` run whose ``where`` picks rows), ``close`` otherwise."""
    prefix = ""
    if data.source == "paper":
        prefix = f"{data.ticker} "
    elif data.source == "csv" and data.where:
        prefix = " ".join(str(v) for v in data.where.values()) + " "
    return [prefix + column for column in data.columns]


def range_notes(scaling: Scaling, x: np.ndarray, labels: list[str], level: bool) -> list[str]:
    """One line per feature of the windows ``x (N, T, F)`` (standardised inputs) whose values
    leave the training range: how far (the ``z`` reached against the training bound, for the
    price also in prices) and in how many windows. ``[]`` where all stay inside, or where the
    run kept no range. ``level``: the model forecasts the price level (not the change)."""
    if scaling.low is None or scaling.high is None:
        return []
    x = np.asarray(x, dtype=np.float64)
    n_features = len(scaling.low)
    if x.ndim != 3 or x.size == 0 or x.shape[-1] != n_features or len(scaling.high) != n_features:
        return []
    notes = []
    for f in range(n_features):
        parts = _beyond(scaling, x[:, :, f], f)
        if parts:
            what = "level forecasts" if level and f == 0 else "forecasts from these inputs"
            notes.append(f"{labels[f]}: {'; '.join(parts)}; {what} are extrapolation")
    return notes


def _beyond(scaling: Scaling, values: np.ndarray, f: int) -> list[str]:
    """``values (N, T)`` of feature ``f`` above and below its training range, each once."""
    low, high = float(scaling.low[f]), float(scaling.high[f])
    parts = []
    above, below = values > high + TOLERANCE, values < low - TOLERANCE
    if above.any():
        top = float(values[above].max())
        parts.append(
            f"inputs reach z = {top:.2f}{_price(scaling, f, top)}, above the training range "
            f"(max {high:.2f}{_price(scaling, f, high)}) in {_share(above)}"
        )
    if below.any():
        bottom = float(values[below].min())
        parts.append(
            f"inputs reach z = {bottom:.2f}{_price(scaling, f, bottom)}, below the training "
            f"range (min {low:.2f}{_price(scaling, f, low)}) in {_share(below)}"
        )
    return parts


def _price(scaling: Scaling, f: int, z: float) -> str:
    """For the price (feature 0): ``z`` in prices, as ``, price 123.4`` (``12,345``)."""
    if f != 0:
        return ""
    price = float(scaling.prices(z))
    return f", price {price:.4g}" if price < 1000 else f", price {price:,.0f}"


def _share(mask: np.ndarray) -> str:
    """How many windows of ``mask (N, T)`` hold a value outside."""
    return f"{int(mask.any(axis=1).sum())} of {len(mask)} windows"
