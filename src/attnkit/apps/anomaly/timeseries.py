"""Time series for anomaly detection: a strict CSV reader and the Numenta Anomaly Benchmark (NAB);
generated solar-like series with known faults are in :mod:`attnkit.apps.anomaly.solar`.

A :class:`TimeSeries` holds ``timestamps (T,)`` (``datetime64[s]``), ``values (T, C)`` and the
labelled anomaly ``windows``: inclusive row ranges ``(first, last)``.

Bad input is never read silently into a wrong series. :func:`read_csv` raises
:class:`TimeSeriesError` naming the file, the line and the column of the first missing or
non-numeric value, of an unsorted or a duplicated timestamp, unless the caller asks for one of
the documented repairs (each repair is listed in ``TimeSeries.repairs``):

- ``on_missing="interpolate"``: empty cells (``""``, ``NA``, ``NaN``, ``null``) are filled by
  linear interpolation between the neighbouring values of the same column (the nearest value
  at either end). Non-numeric text is always an error.
- ``on_unsorted="sort"``: rows are sorted by timestamp (stable); ``"keep"`` keeps the file's
  order (NAB scores rows in file order, and one of its files steps back in time).
- ``on_duplicate="first"`` / ``"mean"``: rows sharing a timestamp are replaced by the first one
  / by their mean; ``"keep"`` keeps them all (timestamps are then only non-decreasing).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnkit.apps.anomaly.csv_rows import (
    TimeSeriesError,
    deduplicate,
    interpolate,
    order_rows,
    parse_time,
    parse_times,
    read_records,
    read_rows,
    value_columns_of,
)


@dataclass
class TimeSeries:
    """One (possibly multivariate) series.

    Attributes:
        name: e.g. ``"realKnownCause/nyc_taxi.csv"``.
        timestamps: ``(T,)`` ``datetime64[s]``, strictly increasing.
        values: ``(T, C)`` float64.
        columns: the ``C`` value column names.
        windows: labelled anomaly windows as inclusive row ranges ``(first, last)``.
        kinds: one label per window (the generator's anomaly kind), or empty.
        repairs: what :func:`read_csv` repaired, one line each.
    """

    name: str
    timestamps: np.ndarray
    values: np.ndarray
    columns: list[str]
    windows: list[tuple[int, int]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.timestamps)

    def labels(self) -> np.ndarray:
        """``(T,)`` bool: True inside a labelled window."""
        out = np.zeros(len(self), dtype=bool)
        for first, last in self.windows:
            out[first : last + 1] = True
        return out


def read_csv(
    path: str | Path,
    *,
    timestamp_column: str = "timestamp",
    value_columns: list[str] | None = None,
    on_missing: str = "error",
    on_unsorted: str = "error",
    on_duplicate: str = "error",
    name: str | None = None,
) -> TimeSeries:
    """Read a CSV with a header, one timestamp column and one or more numeric value columns.

    Args:
        timestamp_column: the header of the ISO-8601 timestamp column.
        value_columns: the value columns (default: every other column).
        on_missing: ``"error"`` or ``"interpolate"``.
        on_unsorted: ``"error"``, ``"sort"`` or ``"keep"`` (file order kept; NAB does this).
        on_duplicate: ``"error"``, ``"first"``, ``"mean"`` or ``"keep"`` (rows kept as they are;
            NAB does this: a few of its files repeat a timestamp).

    Raises :class:`TimeSeriesError` (``"FILE, line N, column 'value': ..."``) otherwise.
    """
    for option, value, allowed in (
        ("on_missing", on_missing, ("error", "interpolate")),
        ("on_unsorted", on_unsorted, ("error", "sort", "keep")),
        ("on_duplicate", on_duplicate, ("error", "first", "mean", "keep")),
    ):
        if value not in allowed:
            raise ValueError(f"{option}={value!r}: choose one of {', '.join(allowed)}")
    path = Path(path)
    records = read_records(path)
    if not records:
        raise TimeSeriesError(f"{path}: empty file (a header line is needed)")
    header = [h.strip() for h in records[0][1]]
    columns = value_columns_of(path, header, timestamp_column, value_columns)
    stamps, values, lines, missing = read_rows(
        path, records[1:], header, timestamp_column, columns, on_missing
    )
    if not stamps:
        raise TimeSeriesError(f"{path}: no data rows after the header")
    ts = parse_times(path, stamps, lines, timestamp_column)
    vals_arr = np.asarray(values, dtype=np.float64)  # (T, C)
    line_arr = np.asarray(lines)
    repairs: list[str] = []
    ts, vals_arr, line_arr = order_rows(
        path, ts, vals_arr, line_arr, timestamp_column, on_unsorted, repairs
    )
    ts, vals_arr = deduplicate(
        path, ts, vals_arr, line_arr, timestamp_column, on_duplicate, repairs
    )
    if missing:
        vals_arr = interpolate(vals_arr, path, columns)
        repairs.append(
            f"interpolated {len(missing)} missing values (first: line {missing[0][0]}, "
            f"column {missing[0][1]!r})"
        )
    return TimeSeries(name or path.name, ts, vals_arr, list(columns), repairs=repairs)


# -- the Numenta Anomaly Benchmark -----------------------------------------------------------


def load_nab(root: str | Path, files: list[str] | None = None) -> list[TimeSeries]:
    """The NAB corpus (Lavin & Ahmad 2015) under ``root`` (``data/`` + ``labels/``).

    Each series gets its ``windows`` from ``labels/combined_windows.json``, converted from
    timestamps to the rows where they start and end (the first row with that time, as NAB's
    scorer). Rows are kept in file order, including repeated or backward timestamps (a few NAB
    files have them), since NAB scores every row in file order. ``files`` picks a subset by key
    (``"realKnownCause/nyc_taxi.csv"``); the default is all 58, in sorted order.
    """
    root = Path(root)
    labels_path = root / "labels" / "combined_windows.json"
    if not labels_path.is_file():
        raise FileNotFoundError(f"{labels_path}: no NAB labels here (see SOURCE.md)")
    windows = json.loads(labels_path.read_text(encoding="utf-8"))
    keys = sorted(windows) if files is None else list(files)
    out = []
    for key in keys:
        if key not in windows:
            raise KeyError(f"{key!r} is not a NAB series (see {labels_path})")
        series = read_csv(root / "data" / key, name=key, on_duplicate="keep", on_unsorted="keep")
        for start, end in windows[key]:
            first, last = (_row_of(series, stamp, labels_path, key) for stamp in (start, end))
            if last < first:
                raise TimeSeriesError(f"{labels_path}: window {start} .. {end} of {key} is empty")
            series.windows.append((first, last))
        out.append(series)
    return out


def _row_of(series: TimeSeries, stamp: str, labels_path: Path, key: str) -> int:
    """The first row whose timestamp is ``stamp`` (NAB windows start and end on rows)."""
    rows = np.nonzero(series.timestamps == np.datetime64(parse_time(stamp), "s"))[0]
    if rows.size == 0:
        raise TimeSeriesError(f"{labels_path}: window edge {stamp} of {key} is not a row's time")
    return int(rows[0])


def write_csv(series: TimeSeries, path: str | Path) -> None:
    """Write ``series`` as ``timestamp,<columns>`` (readable by :func:`read_csv`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["timestamp", *series.columns])
        for t, row in zip(series.timestamps, series.values, strict=True):
            writer.writerow([str(t).replace("T", " "), *(f"{v:.6g}" for v in row)])
