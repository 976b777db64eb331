"""The strict reading behind :func:`attnkit.apps.anomaly.timeseries.read_csv` and its
documented repairs: every error names the file, the line and the column.

The text is read by :func:`attnkit.textfiles.read_text` (a BOM removed; invalid UTF-8 and NUL
characters refused with their line and column). A field longer than the :mod:`csv` module's
limit (131,072 characters, usually an unclosed quote) is an error naming the line where its
record starts. An empty or ``NaT`` timestamp is an error; so is a value that is not a finite
number, unless it is a missing value and the caller asked for interpolation."""

from __future__ import annotations

import logging
import math
import warnings
from datetime import UTC, datetime

import numpy as np

from attnkit.errors import DataError
from attnkit.textfiles import read_csv_records

log = logging.getLogger(__name__)

MISSING = {"", "na", "nan", "null", "none"}


class TimeSeriesError(DataError):
    """A problem with a time-series file, naming the file, line and column."""


def read_records(path) -> list[tuple[int, list[str]]]:
    """The CSV records of ``path``, each with the line it starts on."""
    return read_csv_records(path, TimeSeriesError)


def parse_time(text: str) -> datetime:
    """An ISO-8601 timestamp (``Z`` read as UTC)."""
    return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))


def value_columns_of(path, header: list[str], timestamp_column: str, value_columns) -> list[str]:
    """The value columns, checked against the header (line 1)."""
    if timestamp_column not in header:
        raise TimeSeriesError(f"{path}, line 1: no {timestamp_column!r} column in {header}")
    columns = value_columns or [h for h in header if h != timestamp_column]
    for col in columns:
        if col not in header:
            raise TimeSeriesError(f"{path}, line 1: no value column {col!r} in {header}")
    if not columns:
        raise TimeSeriesError(f"{path}, line 1: no value column besides {timestamp_column!r}")
    return list(columns)


def read_rows(path, records, header, timestamp_column, columns, on_missing):
    """Timestamps (text), values (NaN where missing), line numbers and the missing cells
    ``(line, column)`` of the data ``records`` ``(line, row)``; blank lines are skipped."""
    t_idx, v_idx = header.index(timestamp_column), [header.index(c) for c in columns]
    stamps, values, lines, missing = [], [], [], []
    for line, row in records:
        if not row or all(not cell.strip() for cell in row):
            continue  # blank line
        if len(row) != len(header):
            raise TimeSeriesError(
                f"{path}, line {line}: {len(row)} fields, the header has {len(header)}"
            )
        stamp = row[t_idx].strip()
        if not stamp:
            raise TimeSeriesError(f"{path}, line {line}, column {timestamp_column!r}: no timestamp")
        stamps.append(stamp)
        values.append(
            [
                _cell(path, line, col, row[j].strip(), on_missing, missing)
                for col, j in zip(columns, v_idx, strict=True)
            ]
        )
        lines.append(line)
    return stamps, values, lines, missing


def _cell(path, line: int, col: str, cell: str, on_missing: str, missing: list) -> float:
    if cell.lower() in MISSING:
        if on_missing == "error":
            raise TimeSeriesError(
                f"{path}, line {line}, column {col!r}: missing value "
                "(pass on_missing='interpolate' to fill it from its neighbours)"
            )
        missing.append((line, col))
        return math.nan
    try:
        number = float(cell)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise TimeSeriesError(f"{path}, line {line}, column {col!r}: {cell!r} is not a number")
    return number


def parse_times(path, stamps: list[str], lines: list[int], col: str) -> np.ndarray:
    """``(T,)`` ``datetime64[s]``; NumPy's parser first, row by row to name a bad line.
    NumPy reads ``NaT`` as not-a-time; that is an error here. Timestamps with a UTC offset
    are converted to UTC, and the log says so."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = np.array(stamps, dtype="datetime64[s]")
    except ValueError:
        return _parse_each(path, stamps, lines, col)
    if any("timezone" in str(w.message) for w in caught):
        log.warning("%s, column %r: timestamps with a UTC offset converted to UTC", path, col)
    bad = np.flatnonzero(np.isnat(out))
    if bad.size:
        raise TimeSeriesError(
            f"{path}, line {lines[bad[0]]}, column {col!r}: {stamps[bad[0]]!r} is not a "
            "timestamp (not-a-time)"
        )
    return out


def _parse_each(path, stamps: list[str], lines: list[int], col: str) -> np.ndarray:
    out = []
    for text, line in zip(stamps, lines, strict=True):
        try:
            parsed = parse_time(text)
        except ValueError:
            raise TimeSeriesError(
                f"{path}, line {line}, column {col!r}: {text!r} is not an ISO-8601 timestamp"
            ) from None
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(UTC).replace(tzinfo=None)
        out.append(np.datetime64(parsed, "s"))
    return np.array(out)


def order_rows(path, ts, vals, lines, col, on_unsorted, repairs):
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


def deduplicate(path, ts, vals, lines, col, on_duplicate, repairs):
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


def interpolate(vals: np.ndarray, path=None, columns=None) -> np.ndarray:
    """Fill the NaNs of each column of ``vals (T, C)`` linearly from their neighbours."""
    out = vals.copy()
    x = np.arange(len(vals))
    for c in range(vals.shape[1]):
        bad = np.isnan(out[:, c])
        if bad.all():
            name = repr(columns[c]) if columns is not None else c
            raise TimeSeriesError(
                f"{path or 'series'}, column {name}: every value is missing; nothing to interpolate"
            )
        out[bad, c] = np.interp(x[bad], x[~bad], out[~bad, c])
    return out
