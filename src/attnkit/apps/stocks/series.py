"""Daily price series with named features, read strictly from any CSV file.

:func:`read_series` reads a CSV with a header line, a date column and numeric feature columns,
optionally keeping only the rows whose named column has a value (``where={"ticker": "AMZN"}``
for the alpha_t-RIM paper's multi-ticker file, see :func:`paper_csv`). The text comes through
:func:`attnkit.textfiles.read_text` (a BOM removed, invalid UTF-8 and NUL refused). Every error
is a :class:`StockDataError` whose one-line message starts with the file and names the line and
the column where they apply. :func:`write_csv` writes a series that reads back exactly.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import numpy as np

from attnkit.datadir import default_data_dir
from attnkit.errors import DataError
from attnkit.textfiles import read_csv_records
from attnkit.textfiles import where as at  # read_series's argument `where` is another thing

__all__ = ["PriceSeries", "StockDataError", "paper_csv", "read_series", "write_csv"]


class StockDataError(DataError):
    """A problem with a stock-price file, naming the file and, where it applies, line and
    column."""


@dataclass
class PriceSeries:
    """``T`` trading days of ``F`` features.

    Attributes:
        dates: ``(T,)`` ``datetime64[D]``, strictly increasing.
        values: ``(T, F)`` float64, finite.
        columns: the ``F`` feature names; ``columns[0]`` is the price that is forecast.
        lines: ``(T,)`` int, the file line of each row (for error messages); 0 if generated.
        source: the file path, or ``"generated"``.
    """

    dates: np.ndarray
    values: np.ndarray
    columns: list[str]
    lines: np.ndarray
    source: str

    def __post_init__(self) -> None:
        t = len(self.dates)
        if self.values.shape != (t, len(self.columns)) or self.lines.shape != (t,):
            raise ValueError(
                f"PriceSeries: values {self.values.shape}, lines {self.lines.shape} do not fit "
                f"{t} dates and {len(self.columns)} columns"
            )

    def __len__(self) -> int:
        return len(self.dates)

    def column(self, name: str) -> np.ndarray:
        """The ``(T,)`` values of feature ``name``."""
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; the series has {self.columns}")
        return self.values[:, self.columns.index(name)]


def _records(path: Path) -> list[tuple[int, list[str]]]:
    """The non-blank CSV records of ``path``, each with the line it starts on."""
    return read_csv_records(path, StockDataError, skip_blank=True)


def _check_header(path: Path, line: int, header: list[str], names: list[str]) -> None:
    """Each of ``names`` must be in ``header`` exactly once."""
    for name in names:
        if name not in header:
            raise StockDataError(f"{at(path, line)}: no column {name!r} in the header {header}")
        if header.count(name) > 1:
            raise StockDataError(f"{at(path, line)}: column {name!r} appears twice in {header}")


def _keep(path: Path, header: list[str], rows: list, conditions: Mapping[str, str]) -> list:
    """The ``(line, row)`` records whose columns equal the ``conditions``; none left is an
    error naming the values the column has."""
    for name, value in conditions.items():
        j = header.index(name)
        kept = [(line, row) for line, row in rows if row[j].strip() == str(value)]
        if not kept:
            seen = list(dict.fromkeys(row[j].strip() for _, row in rows))
            more = ", ..." if len(seen) > 10 else ""
            has = ", ".join(repr(v) for v in seen[:10]) + more
            raise StockDataError(f"{path}: no row has {name} = {value!r} (it has {has})")
        rows = kept
    return rows


def _day(path: Path, line: int, column: str, text: str) -> np.datetime64:
    """An ISO date or datetime as its day (a UTC offset is ignored: the day as written)."""
    text = text.strip()
    try:
        day = date.fromisoformat(text) if len(text) <= 10 else datetime.fromisoformat(text).date()
    except ValueError:
        raise StockDataError(
            f"{at(path, line, column)}: {text!r} is not an ISO date (YYYY-MM-DD)"
        ) from None
    return np.datetime64(day, "D")


def _number(path: Path, line: int, column: str, text: str) -> float:
    text = text.strip()
    if not text:
        raise StockDataError(f"{at(path, line, column)}: missing value")
    try:
        number = float(text)
    except ValueError:
        number = float("nan")
    if not np.isfinite(number):
        raise StockDataError(f"{at(path, line, column)}: {text!r} is not a finite number")
    return number


def _check_order(path: Path, dates: np.ndarray, lines: np.ndarray) -> None:
    bad = np.flatnonzero(dates[1:] <= dates[:-1])
    if bad.size:
        i = bad[0] + 1
        what = "repeats" if dates[i] == dates[i - 1] else "is earlier than"
        raise StockDataError(
            f"{at(path, int(lines[i]))}: date {dates[i]} {what} {dates[i - 1]} on line "
            f"{lines[i - 1]} (dates must be strictly increasing)"
        )


def read_series(
    path: str | Path,
    *,
    columns: Sequence[str],
    date_column: str = "date",
    where: Mapping[str, str] | None = None,
) -> PriceSeries:
    """The series of a CSV file with a header line, ``date_column`` (ISO dates, or datetimes
    reduced to the day) and the numeric ``columns`` (``columns[0]`` is the price forecast).

    Args:
        path: the CSV file.
        columns: the ``F`` feature columns to read, in this order.
        date_column: the column of the dates, strictly increasing after ``where``.
        where: keep only the rows whose named column equals the value.

    Returns:
        A :class:`PriceSeries` of ``T`` rows: dates ``(T,)``, values ``(T, F)``.

    Raises:
        StockDataError: one line starting with the file (line and column where they apply).
    """
    if isinstance(columns, str) or not columns or len(set(columns)) != len(columns):
        raise ValueError(f"columns must be a list of distinct names, got {columns!r}")
    conditions = dict(where or {})
    path = Path(path)
    records = _records(path)
    if not records:
        raise StockDataError(f"{path}: empty file (expected a header line and rows)")
    (head_line, header), rows = records[0], records[1:]
    header = [name.strip() for name in header]
    _check_header(path, head_line, header, [date_column, *columns, *conditions])
    if not rows:
        raise StockDataError(f"{at(path, head_line)}: no rows after the header")
    for line, row in rows:
        if len(row) != len(header):
            raise StockDataError(
                f"{at(path, line)}: {len(row)} fields, the header has {len(header)}"
            )
    rows = _keep(path, header, rows, conditions)
    d, idx = header.index(date_column), [header.index(c) for c in columns]
    dates = np.array([_day(path, ln, date_column, row[d]) for ln, row in rows], "datetime64[D]")
    values = np.array(
        [
            [_number(path, ln, c, row[j]) for c, j in zip(columns, idx, strict=True)]
            for ln, row in rows
        ],
        dtype=np.float64,
    )
    lines = np.array([line for line, _ in rows], dtype=np.int64)
    _check_order(path, dates, lines)
    return PriceSeries(dates, values, list(columns), lines, str(path))


def write_csv(series: PriceSeries, path: str | Path) -> Path:
    """Write ``date,<columns...>`` with every float in full precision, so that
    ``read_series(path, columns=series.columns)`` reads back the same dates and values."""
    if "date" in series.columns:
        raise ValueError("a feature column may not be named 'date' (the date column's name)")
    path = Path(path)
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["date", *series.columns])
        for day, row in zip(series.dates, series.values.tolist(), strict=True):
            out.writerow([str(np.datetime64(day, "D")), *(repr(float(v)) for v in row)])
    return path


def paper_csv(data_dir: str | Path | None = None) -> Path:
    """Where the alpha_t-RIM paper's file is: ``data_dir/stocks/df_cut.csv``, with
    ``data_dir`` defaulting to ``$ATTNKIT_DATA_DIR``, else ``../shared/data``; an error if it
    is missing (the data set is never copied into the repository)."""
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    path = root / "stocks" / "df_cut.csv"
    if not path.is_file():
        raise StockDataError(
            f"{path}: the alpha_t-RIM paper's stock data not found (it lives in "
            "../shared/data/stocks and is never copied into the repository; set "
            "ATTNKIT_DATA_DIR or pass the folder holding stocks/)"
        )
    return path
