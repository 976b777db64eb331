"""Scoring an anomaly-detection run on a CSV of one's own: ``attnkit evaluate RUN --src FILE``.

The file is read as the run's CSVs are (:func:`~.timeseries.read_csv`, strictly: a missing or
non-numeric value, an unsorted or repeated timestamp is named with file, line and column; the
run's ``value_columns``, else every column but ``timestamp`` and ``label``). As ``predict``
does, a detector is fitted on the file's first rows with the run's settings (detectors are per
stream) and every later row is scored causally with the run's threshold.

Labels are optional: a ``label`` column, 1 on the rows inside a labelled anomaly window and 0
elsewhere (NAB's windows written row by row), gives the NAB score of the run's profile, point
F1, ROC-AUC and event F1 (:func:`~.experiment.measure`). Without one, or with no row labelled,
the report says what can be said without labels: the rows scored and flagged, the anomalies
(runs of flagged rows) and the score's median, 99th percentile and maximum, and a note that
the NAB score needs labels.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from attnkit.apps.anomaly.csv_rows import TimeSeriesError, read_records
from attnkit.apps.anomaly.experiment import headline, measure, run_series
from attnkit.apps.anomaly.timeseries import TimeSeries, read_csv
from attnkit.results import Scores

LABEL = "label"
TIMESTAMP = "timestamp"


def evaluate_csv(run, path: Path) -> Scores:
    """``run`` (an :class:`~.run.AnomalyRun`) on the CSV ``path``: the scores of
    :func:`~.experiment.headline`, and notes where the file has no labels."""
    path = Path(path)
    cfg = run.config
    series, labelled = read_labelled(path, cfg.data.value_columns)
    where = {} if run.device is None else {"device": str(run.device)}
    detector = replace(cfg.detector, threshold=run.threshold, **where)
    results = run_series([series], detector)
    metrics = headline(measure(results, cfg.profile, run.threshold))
    notes = []
    if not series.windows:
        ((_, fitted, detection),) = results
        scored = detection.score[fitted.train_rows :]
        metrics.update(
            score_median=float(np.median(scored)),
            score_p99=float(np.quantile(scored, 0.99)),
            score_max=float(scored.max()),
        )
        why = "its label column marks no row" if labelled else "it has no label column"
        notes.append(
            f"{path}: {why}, so no NAB score, F1 or ROC-AUC (they need labels: a column "
            f"{LABEL!r}, 1 on the rows inside an anomaly window, 0 elsewhere)"
        )
    out = Scores(str(run.path), str(path), metrics, 1, "series")
    out.notes = notes
    return out


def read_labelled(path: Path, value_columns: list[str]) -> tuple[TimeSeries, bool]:
    """The series of ``path`` and whether it has a ``label`` column; its labelled windows
    (runs of rows labelled 1) in ``series.windows``."""
    records = read_records(path)
    header = [h.strip() for h in records[0][1]] if records else []
    labelled = LABEL in header
    columns = list(value_columns) or [h for h in header if h not in (TIMESTAMP, LABEL)] or None
    series = read_csv(path, value_columns=columns)
    if labelled:
        flags = read_csv(path, value_columns=[LABEL]).values[:, 0]  # (T,), as the rows
        series.windows = label_windows(path, flags, _data_lines(records))
    return series, labelled


def _data_lines(records: list[tuple[int, list[str]]]) -> list[int]:
    """The line of each data row, blank lines skipped as the reader skips them."""
    return [line for line, row in records[1:] if row and any(cell.strip() for cell in row)]


def label_windows(path: Path, flags: np.ndarray, lines: list[int]) -> list[tuple[int, int]]:
    """The inclusive row ranges where ``flags (T,)`` is 1; a value that is not 0 or 1 is an
    error naming its line."""
    bad = np.flatnonzero((flags != 0) & (flags != 1))
    if bad.size:
        i = int(bad[0])
        raise TimeSeriesError(
            f"{path}, line {lines[i]}, column {LABEL!r}: {flags[i]:g} is not 0 or 1 (1 marks "
            "a row inside a labelled anomaly window)"
        )
    edges = np.diff(np.concatenate([[0], flags.astype(int), [0]]))  # (T + 1,)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return [(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]
