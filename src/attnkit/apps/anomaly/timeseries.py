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
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

MISSING = {"", "na", "nan", "null", "none"}


class TimeSeriesError(ValueError):
    """A problem with a time-series file, naming the file, line and column."""


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


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))


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
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise TimeSeriesError(f"{path}: empty file (a header line is needed)")
    header = [h.strip() for h in rows[0]]
    if timestamp_column not in header:
        raise TimeSeriesError(f"{path}, line 1: no {timestamp_column!r} column in {header}")
    columns = value_columns or [h for h in header if h != timestamp_column]
    for col in columns:
        if col not in header:
            raise TimeSeriesError(f"{path}, line 1: no value column {col!r} in {header}")
    if not columns:
        raise TimeSeriesError(f"{path}, line 1: no value column besides {timestamp_column!r}")
    t_idx, v_idx = header.index(timestamp_column), [header.index(c) for c in columns]
    stamps, values, lines, missing = [], [], [], []
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue  # blank line
        if len(row) != len(header):
            raise TimeSeriesError(
                f"{path}, line {line}: {len(row)} fields, the header has {len(header)}"
            )
        stamps.append(row[t_idx].strip())
        vals = []
        for col, j in zip(columns, v_idx, strict=True):
            cell = row[j].strip()
            if cell.lower() in MISSING:
                if on_missing == "error":
                    raise TimeSeriesError(
                        f"{path}, line {line}, column {col!r}: missing value "
                        "(pass on_missing='interpolate' to fill it from its neighbours)"
                    )
                missing.append((line, col))
                vals.append(math.nan)
                continue
            try:
                number = float(cell)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                raise TimeSeriesError(
                    f"{path}, line {line}, column {col!r}: {cell!r} is not a number"
                )
            vals.append(number)
        values.append(vals)
        lines.append(line)
    if not stamps:
        raise TimeSeriesError(f"{path}: no data rows after the header")
    ts = _parse_times(path, stamps, lines, timestamp_column)
    vals_arr = np.asarray(values, dtype=np.float64)  # (T, C)
    line_arr = np.asarray(lines)
    repairs: list[str] = []
    ts, vals_arr, line_arr = _order(
        path, ts, vals_arr, line_arr, timestamp_column, on_unsorted, repairs
    )
    ts, vals_arr = _deduplicate(
        path, ts, vals_arr, line_arr, timestamp_column, on_duplicate, repairs
    )
    if missing:
        vals_arr = _interpolate(vals_arr)
        repairs.append(
            f"interpolated {len(missing)} missing values (first: line {missing[0][0]}, "
            f"column {missing[0][1]!r})"
        )
    return TimeSeries(name or path.name, ts, vals_arr, list(columns), repairs=repairs)


def _parse_times(path, stamps: list[str], lines: list[int], col: str) -> np.ndarray:
    """``(T,)`` ``datetime64[s]``; NumPy's parser first, row by row to name a bad line."""
    try:
        return np.array(stamps, dtype="datetime64[s]")
    except ValueError:
        pass
    out = []
    for text, line in zip(stamps, lines, strict=True):
        try:
            parsed = _parse_time(text)
        except ValueError:
            raise TimeSeriesError(
                f"{path}, line {line}, column {col!r}: {text!r} is not an ISO-8601 timestamp"
            ) from None
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(UTC).replace(tzinfo=None)
        out.append(np.datetime64(parsed, "s"))
    return np.array(out)


def _order(path, ts, vals, lines, col, on_unsorted, repairs):
    back = np.nonzero(ts[1:] < ts[:-1])[0]
    if back.size == 0:
        return ts, vals, lines
    if on_unsorted == "keep":
        repairs.append(
            f"kept {back.size} timestamps that step back (first: line {lines[back[0] + 1]})"
        )
        return ts, vals, lines
    if on_unsorted == "error":
        i = back[0] + 1
        raise TimeSeriesError(
            f"{path}, line {lines[i]}, column {col!r}: timestamp {ts[i]} is earlier than "
            f"{ts[i - 1]} on line {lines[i - 1]} (pass on_unsorted='sort' to sort the rows)"
        )
    order = np.argsort(ts, kind="stable")
    repairs.append(f"sorted rows by timestamp ({back.size} out of order)")
    return ts[order], vals[order], lines[order]


def _deduplicate(path, ts, vals, lines, col, on_duplicate, repairs):
    same = np.nonzero(ts[1:] == ts[:-1])[0]
    if same.size == 0 or (on_duplicate == "error" and np.unique(ts).size == ts.size):
        return ts, vals
    if on_duplicate == "error":
        i = same[0] + 1
        raise TimeSeriesError(
            f"{path}, line {lines[i]}, column {col!r}: duplicate timestamp {ts[i]} (also on line "
            f"{lines[i - 1]}; pass on_duplicate='first' or 'mean')"
        )
    if on_duplicate == "keep":
        repairs.append(
            f"kept {same.size} rows that repeat a timestamp (first: line {lines[same[0] + 1]})"
        )
        return ts, vals
    uniq, start, counts = np.unique(ts, return_index=True, return_counts=True)
    if on_duplicate == "first":
        out = vals[start]
    else:
        group = np.repeat(np.arange(len(uniq)), counts)  # rows are sorted, so groups are runs
        out = np.zeros((len(uniq), vals.shape[1]))
        np.add.at(out, group, vals)
        out /= counts[:, None]
    repairs.append(f"merged {same.size} duplicate-timestamp rows ({on_duplicate})")
    return uniq, out


def _interpolate(vals: np.ndarray) -> np.ndarray:
    out = vals.copy()
    x = np.arange(len(vals))
    for c in range(vals.shape[1]):
        bad = np.isnan(out[:, c])
        if bad.all():
            raise TimeSeriesError(f"column {c}: every value is missing; nothing to interpolate")
        out[bad, c] = np.interp(x[bad], x[~bad], out[~bad, c])
    return out


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
    rows = np.nonzero(series.timestamps == np.datetime64(_parse_time(stamp), "s"))[0]
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
