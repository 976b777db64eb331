"""The series a config names, cut into the paper's splits and windows.

``generated``: :func:`~attnkit.apps.stocks.generator.generate_stocks` (the truth of when
sentiment matters comes with it); ``paper``: one ticker of the alpha_t-RIM paper's file
(``../shared/data/stocks/df_cut.csv``, read from there, never copied); ``csv``: any file with a
date column and named numeric columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from attnkit.apps.stocks.config import StockDataConfig
from attnkit.apps.stocks.generator import generate_stocks
from attnkit.apps.stocks.series import PriceSeries, StockDataError, paper_csv, read_series
from attnkit.apps.stocks.windows import (
    Scaling,
    Windows,
    holdout_days,
    make_splits,
    split_days,
)


@dataclass
class StockSets:
    """A series, its scaling and its windows; ``matters (T,)``: generated days whose return
    follows lagged sentiment (``None`` for real data)."""

    series: PriceSeries
    scaling: Scaling
    windows: dict[str, Windows]
    n_train: int  # days [0, n_train) are the training days
    matters: np.ndarray | None = None


def load_series(cfg: StockDataConfig) -> tuple[PriceSeries, np.ndarray | None]:
    """The configured series (columns: ``cfg.columns``) and, if generated, its truth."""
    if cfg.source == "generated":
        made = generate_stocks(
            cfg.days,
            seed=cfg.seed,
            strength=cfg.strength,
            lag=cfg.lag,
            share=cfg.share,
            regime_days=cfg.regime_days,
        )
        series = made.series
        keep = [series.columns.index(c) for c in _known(cfg.columns, series.columns, "generated")]
        cut = PriceSeries(
            series.dates, series.values[:, keep], cfg.columns, series.lines, series.source
        )
        return cut, made.matters
    if cfg.source == "paper":
        path = paper_csv(cfg.data_dir)
        return read_series(path, columns=cfg.columns, where={"ticker": cfg.ticker}), None
    return read_series(
        cfg.path, columns=cfg.columns, date_column=cfg.date_column, where=cfg.where or None
    ), None


def _known(wanted: list[str], have: list[str], source: str) -> list[str]:
    for name in wanted:
        if name not in have:
            raise ValueError(f"data.features: {source} data has no column {name!r}; it has {have}")
    return wanted


def load_sets(cfg: StockDataConfig) -> StockSets:
    """:func:`load_series`, then the scaling and ``{"train", "valid", "test"}`` windows."""
    series, matters = load_series(cfg)
    return sets_of(series, cfg, matters)


def sets_of(
    series: PriceSeries,
    cfg: StockDataConfig,
    matters: np.ndarray | None = None,
    days: int | None = None,
) -> StockSets:
    """:class:`StockSets` of the first ``days`` days of ``series`` (all by default): a rolling
    origin's fold is the series cut at the fold's end and split as configured."""
    if days is not None:
        series = PriceSeries(
            series.dates[:days],
            series.values[:days],
            series.columns,
            series.lines[:days],
            series.source,
        )
        matters = None if matters is None else matters[:days]
    if cfg.until is None:
        scaling, windows = make_splits(series, cfg.shares, cfg.window, cfg.horizon)
        n_train = split_days(len(series), cfg.shares)[0]
    else:
        known = known_days(series, cfg.until)
        scaling, windows = make_splits(series, cfg.shares, cfg.window, cfg.horizon, known)
        n_train = holdout_days(known, cfg.shares)[0]
    return StockSets(series, scaling, windows, n_train, matters)


def known_days(series: PriceSeries, until: date) -> int:
    """How many days of ``series`` come on or before ``until`` (``data.until``); none, or
    none after it, is an error naming the file and the field."""
    known = int(np.searchsorted(series.dates, np.datetime64(until, "D"), side="right"))
    first, last = series.dates[0], series.dates[-1]
    if known == 0:
        raise StockDataError(
            f"{series.source}: data.until {until} is before the first day ({first}); "
            "no days to train on"
        )
    if known == len(series):
        raise StockDataError(
            f"{series.source}: data.until {until} is on or after the last day ({last}); "
            "no later days to test on"
        )
    return known
