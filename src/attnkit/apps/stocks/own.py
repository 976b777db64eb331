"""Scoring a stocks run on a CSV of one's own: ``attnkit evaluate RUN --src FILE.csv``.

The file is read as ``attnkit predict`` reads it (:func:`~.predict.read_for_run`: the run's
date column and features, its ticker's or ``where`` rows), standardised with the run's training
statistics, and cut into every window whose forecast days lie inside the file (``window`` input
days, then ``horizon`` days whose prices are known). The report is the split evaluation's:
MAPE (%) and R² per horizon on prices, persistence beside, the Diebold-Mariano tests against
it (ARIMA is left out: it is fitted on the run's training days, which the file need not hold).

Two kinds of notes come with it, each also logged as a warning: a feature whose inputs leave
the training range (:meth:`~.run.StocksRun.outside`), and windows that forecast days on or
before the last day the run trained or validated on (``seen_until`` in ``metrics.json``),
whose scores are not out of sample if the file holds the series the run trained on.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from attnkit.apps.stocks.predict import read_for_run
from attnkit.apps.stocks.scoring import as_scores, score_windows
from attnkit.apps.stocks.series import StockDataError
from attnkit.apps.stocks.windows import cut_windows, log_prices
from attnkit.engine.rundir import RunDir
from attnkit.results import Scores

log = logging.getLogger(__name__)


def evaluate_csv(run, path: Path) -> Scores:
    """``run`` (a :class:`~.run.StocksRun`) scored on every window of the CSV ``path``."""
    path = Path(path)
    d = run.config.data
    series = read_for_run(run, path)
    z = run.scaling.transform(log_prices(series))  # (T, F)
    w = cut_windows(z, 0, len(series), d.window, d.horizon)
    if len(w) < 3:
        raise StockDataError(
            f"{path}: {len(series)} days give {len(w)} windows of {d.window} days and "
            f"{d.horizon} ahead; scoring needs at least 3 ({d.window + d.horizon + 2} days)"
        )
    kind = run.config.model.kind
    scores = as_scores(
        str(run.path), str(path), score_windows(run.model, run.scaling, w, name=kind), kind
    )
    scores.notes = warned(run.outside(w.x) + seen_notes(run, series.dates[w.last + 1]))
    return scores


def warned(notes: list[str]) -> list[str]:
    """Each note logged as a warning, and as the report's ``warning: ...`` line."""
    for note in notes:
        log.warning("%s", note)
    return [f"warning: {note}" for note in notes]


def seen_notes(run, first_days: np.ndarray) -> list[str]:
    """A line if some windows forecast days the run trained or validated on (the first
    forecast day of each window: ``first_days (N,)``); ``[]`` for runs that did not keep
    ``seen_until``."""
    seen = RunDir(run.path).read_metrics().get("seen_until")
    if seen is None:
        return []
    inside = int((first_days <= np.datetime64(seen, "D")).sum())
    if not inside:
        return []
    return [
        f"{inside} of {len(first_days)} windows forecast days on or before {seen}, the last "
        "day the run trained or validated on: if this is the series it trained on, their "
        "scores are not out of sample (score later days only, or train with data.until)"
    ]
