"""One self-contained HTML report of a stocks run (``attnkit report RUN_DIR``).

The page holds the configuration, the training history from ``metrics.json``, the test table
recomputed from the run's data (MAPE and R² per horizon for the model, persistence and ARIMA;
the Diebold-Mariano test against persistence, Diebold & Mariano 1995 with Harvey et al.'s 1997
correction), the test forecasts beside the true prices, and for a RIM the activation pattern,
the input attention and the communication between cells on the test split (Koenigstein 2023,
§5). On generated data it also compares the attention on the sentiment feature on the days
where sentiment drives the returns with the other days. Pictures are inlined as base64 PNG and
the style sheet sits in the page: no links, scripts or fonts to fetch.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from attnkit.apps.stocks.baselines import persistence
from attnkit.apps.stocks.reading import Trace, trace
from attnkit.apps.stocks.scoring import score_split
from attnkit.apps.stocks.sets import StockSets, load_sets
from attnkit.apps.stocks.views import plot_activation, plot_communication, plot_forecasts
from attnkit.engine.rundir import RunDir
from attnkit.interpret import report_page as rp

RIM_KINDS = ("alpha_t_rim", "rim")


def write_report(run, output: str | Path) -> Path:
    """Write the HTML report of ``run`` (a :class:`~attnkit.apps.stocks.run.StocksRun`) to
    ``output``; returns ``output``. The data are read again with the run's config
    (:func:`~attnkit.apps.stocks.sets.load_sets`) and the test split scored afresh."""
    cfg = run.config
    metrics = RunDir(run.path).read_metrics()
    sets = load_sets(cfg.data)
    with tempfile.TemporaryDirectory() as tmp:
        body = [
            f"<h1>attnkit stocks report: {rp.escape(cfg.name)}</h1>",
            f"<p>Run directory <code>{rp.escape(Path(run.path).resolve())}</code>; data "
            f"<code>{rp.escape(sets.series.source)}</code>, features "
            f"{rp.escape(', '.join(cfg.data.columns))}"
            f", windows of {cfg.data.window} days, {cfg.data.horizon} day(s) ahead.</p>",
            rp.config_section(cfg, metrics),
            rp.history_section(metrics),
            _scores(run, sets, metrics),
            _forecasts(run, sets, Path(tmp)),
            _attention(run, sets, Path(tmp)),
        ]
    return rp.write_page(output, cfg.name, body)


def _scores(run, sets: StockSets, metrics: dict) -> str:
    """The per-horizon table on the test split and the DM tests: the one training wrote into
    ``metrics.json`` (same data, same kept model), else :func:`score_split` afresh."""
    cfg = run.config
    if len(sets.windows["test"]) < 3:
        return (
            f"<h2>Test scores</h2><p>The test split has {len(sets.windows['test'])} windows; "
            "scoring needs at least 3.</p>"
        )
    scores = metrics.get("test") or score_split(
        run.model, sets, "test", name=cfg.model.kind, arima=cfg.train.arima
    )
    horizons = range(1, cfg.data.horizon + 1)
    head = ["model", *(f"{m} h={h}" for h in horizons for m in ("MAPE %", "R²"))]
    rows = [
        [name, *(f"{v:.4f}" for pair in zip(t["mape"], t["r2"], strict=True) for v in pair)]
        for name, t in scores["models"].items()
    ]
    dm = [
        [name, h + 1, f"{t['statistic']:+.3f}", f"{t['p_value']:.4f}"]
        for name, tests in scores["dm_vs_persistence"].items()
        for h, t in enumerate(tests)
    ]
    order = scores.get("arima_order")
    arima = f" ARIMA order {tuple(order)} (by AIC on the training days)." if order else ""
    return (
        f"<h2>Test scores</h2><p>{scores['windows']} test windows; MAPE in % and R² on prices, "
        f"per horizon h (days ahead).{arima}</p>{rp.table(head, rows)}"
        "<h3>Diebold-Mariano test against persistence</h3><p>Squared errors, with Harvey et "
        "al.'s small-sample correction; a negative statistic: the model beats persistence.</p>"
        + rp.table(["model", "horizon", "DM statistic", "p-value"], dm)
    )


def _forecasts(run, sets: StockSets, tmp: Path) -> str:
    """The model's and persistence's forecasts 1 day ahead on the test split."""
    w = sets.windows["test"]
    if len(w) == 0:
        return "<h2>Test forecasts</h2><p>The test split holds no window.</p>"
    prices = sets.scaling.prices
    horizon = w.y.shape[1]
    forecasts = {
        run.config.model.kind: run.predict(w.x),
        "persistence": prices(persistence(w.x, horizon)),
    }
    dates = sets.series.dates[w.last]
    path = plot_forecasts(
        dates, prices(w.y), forecasts, tmp / "forecasts.png", title="test split, 1 day ahead"
    )
    return (
        "<h2>Test forecasts</h2><p>The true price and the forecasts for the day after each "
        "test window's last day (ARIMA, scored above, is left out of the picture).</p>"
        + rp.image(path, "forecasts on the test split")
    )


def _attention(run, sets: StockSets, tmp: Path) -> str:
    """The RIM's activation pattern, input attention and communication on the test split."""
    kind = run.config.model.kind
    if kind not in RIM_KINDS:
        return (
            f"<h2>Attention</h2><p>This {rp.escape(kind)} model records no attention: only the RIM "
            "models (alpha_t_rim, rim) pick active cells by input attention, so there is no "
            "activation pattern or communication to show.</p>"
        )
    w = sets.windows["test"]
    if len(w) == 0:
        return "<h2>Attention</h2><p>The test split holds no window.</p>"
    tr = trace(run.model, w)
    series = sets.series
    matters = None if sets.matters is None else sets.matters[w.last + 1]  # (N,)
    activation = plot_activation(
        tr,
        series.dates[w.last],
        tmp / "activation.png",
        features=series.columns,
        prices=series.values[w.last, 0],
        matters=matters,
        title="test split",
    )
    communication = plot_communication(
        tr, tmp / "communication.png", title="mean communication weights, test split"
    )
    return (
        "<h2>Attention on the test split</h2><p>Each of the test split's windows is read at its "
        f"last day: which of the {tr.active.shape[1]} cells are active, how much the active "
        "cells read each feature and the null token (Koenigstein 2023, §5 reads this pattern "
        "as the model's explanation), and the price that day.</p>"
        + _sentiment_line(tr, series.columns, matters)
        + rp.image(activation, "activation pattern and input attention")
        + "<p>Row i: how much cell i read from each cell when it was active (Goyal et al. "
        "2019, eq. 4); a row of zeros is a cell never active on these days.</p>"
        + rp.image(communication, "communication between cells")
    )


def _sentiment_line(tr: Trace, columns: list[str], matters: np.ndarray | None) -> str:
    """Generated data: the mean input-attention weight on ``sentiment`` (over the active
    cells) on the windows whose next day's return follows sentiment, and on the others."""
    if matters is None:
        return ""
    if "sentiment" not in columns:
        return "<p>The model does not read the sentiment feature.</p>"
    weight = tr.feature_weights()[:, columns.index("sentiment")]  # (N,)
    parts = []
    for label, where in (("matters", matters), ("does not", ~matters)):
        mean = f"{weight[where].mean():.4f}" if where.any() else "no such window"
        parts.append(f"{mean} on the {int(where.sum())} windows where it {label}")
    return (
        "<p>Mean input-attention weight on sentiment (averaged over the active cells) over "
        f"the test split: {parts[0]}, {parts[1]} (it matters: the return of the day after "
        "the window's last day follows the lagged sentiment; shaded in the picture).</p>"
    )
