"""Forecasting a new CSV with a trained stocks run (``attnkit predict RUN --csv FILE``).

The file is read with the run's feature columns and date column (:func:`read_series`), cut into
every full window (standardised with the run's training statistics), and each window is
forecast ``horizon`` days ahead. For a RIM (alpha_t_rim, rim) each row also carries the input
attention of the active cells on the window's last day and which cells were active: the
activation pattern that Koenigstein (2023, §5) reads as the explanation of a forecast.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from attnkit.apps.stocks.reading import Trace, trace
from attnkit.apps.stocks.series import PriceSeries, StockDataError, read_series
from attnkit.apps.stocks.views import plot_activation
from attnkit.results import Predictions
from attnkit.textfiles import where as at

RIM_KINDS = ("alpha_t_rim", "rim")


def _header(path: Path) -> tuple[int, list[str]]:
    """The first non-blank line of ``path`` and its names (``(0, [])`` if it cannot be read:
    the reader then says why)."""
    try:
        with Path(path).open(encoding="utf-8-sig", errors="replace", newline="") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    return number, [name.strip() for name in next(csv.reader([line]), [])]
    except OSError:
        pass
    return 0, []


def columns_needed(data) -> str:
    """What a CSV needs for a run of ``data`` (its config's ``data``), for people."""
    names = ", ".join([data.date_column, *data.columns])
    if data.source == "paper":
        return f"{names} (and a ticker column to keep {data.ticker}'s rows, if it has others)"
    if data.source == "csv" and data.where:
        keep = ", ".join(f"{k} = {v}" for k, v in data.where.items())
        return f"{names} and {', '.join(data.where)} (the rows with {keep} are kept)"
    return names


def read_for_run(run, path: Path) -> PriceSeries:
    """The series of ``path`` as ``run`` reads it: its feature columns and date column, the
    rows of the run's ticker for a ``paper`` run (if the file has a ``ticker`` column) or of
    the run's ``where`` for a ``csv`` run. A missing column names those the run reads; fewer
    days than a window is a :class:`StockDataError` naming the file."""
    d = run.config.data
    line, header = _header(path)
    where = None
    if d.source == "paper" and "ticker" in header:
        where = {"ticker": d.ticker}
    elif d.source == "csv":
        where = d.where or None
    missing = [c for c in [d.date_column, *d.columns, *(where or {})] if c not in header]
    if header and missing:
        raise StockDataError(
            f"{at(path, line)}: no column {missing[0]!r} in the header {header}; this "
            f"{d.source} run reads {columns_needed(d)}"
        )
    series = read_series(path, columns=d.columns, date_column=d.date_column, where=where)
    if len(series) < d.window:
        rows = f" (rows with {where})" if where else ""
        days = f"{len(series)} day" + ("" if len(series) == 1 else "s")
        raise StockDataError(
            f"{path}: {days}{rows}; the run's windows need at least {d.window} days"
        )
    return series


def forecast_rows(run, series: PriceSeries) -> tuple[list[str], list[list], Trace | None]:
    """One row per window of ``series`` (the window's last day): the date, the price that day,
    the forecast prices ``(horizon,)`` and, for a RIM, the input-attention weight of each
    feature and of the null token averaged over the active cells, and the active cells (their
    numbers, comma-separated). Returns the header, the rows and the RIM's trace (or None).
    Inputs outside the training range are logged as warnings (:meth:`StocksRun.predict`)."""
    w = run.windows(series)  # x (N, T, F), last (N,)
    prices = run.predict(w.x)  # (N, horizon)
    horizon = prices.shape[1]
    header = ["date", series.columns[0], *(f"forecast_{h + 1}" for h in range(horizon))]
    tr = weights = None
    if run.config.model.kind in RIM_KINDS:
        tr = trace(run.model, w)
        weights = tr.feature_weights()  # (N, F + 1)
        header += [*(f"weight_{c}" for c in series.columns), "weight_null", "active"]
    rows = []
    for n, day in enumerate(w.last):
        row = [str(series.dates[day]), _num(series.values[day, 0]), *map(_num, prices[n])]
        if tr is not None:
            active = ",".join(str(c) for c in np.flatnonzero(tr.active[n]))
            row += [*map(_num, weights[n]), active]
        rows.append(row)
    return header, rows, tr


def _num(value) -> str:
    return f"{float(value):.6f}"


def predict_csv(run, path: Path, *, picture: Path | None = None) -> Predictions:
    """Forecast every window of the CSV ``path`` with ``run`` (a
    :class:`~attnkit.apps.stocks.run.StocksRun`): one row per window (see
    :func:`forecast_rows`); ``notes``: a line for each feature whose inputs leave the training
    range, naming it and how far (``warning: ...``; also logged). ``picture``: the activation
    pattern and input attention of these windows as a PNG (:func:`~.views.plot_activation`);
    only a RIM records attention, so an rnn or lstm run refuses it.
    """
    kind = run.config.model.kind
    if picture is not None and kind not in RIM_KINDS:
        raise ValueError(
            f"--picture: the {kind} model records no attention; only RIM runs "
            f"({', '.join(RIM_KINDS)}) draw an activation pattern"
        )
    path = Path(path)
    series = read_for_run(run, path)
    header, rows, tr = forecast_rows(run, series)
    windows = run.windows(series)
    result = Predictions(
        str(run.path), header, rows, notes=[f"warning: {n}" for n in run.outside(windows.x)]
    )
    if picture is not None:
        last = windows.last
        prices = series.values[last, 0]
        plot_activation(
            tr, series.dates[last], picture, features=series.columns, prices=prices, title=path.name
        )
        result.written.append(str(picture))
    return result
