"""Issue 15: bad time-series CSV files are errors naming the file, the line and the column
(never a traceback, never a NaN or a not-a-time in the series), and a spreadsheet's BOM is read.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from attnkit.apps.anomaly.timeseries import TimeSeriesError, read_csv
from attnkit.cli import app
from attnkit.errors import DataError

GOOD = "timestamp,a\n2024-01-01 00:00:00,1\n2024-01-01 01:00:00,2\n2024-01-01 02:00:00,4\n"


def write(tmp_path: Path, data: str | bytes) -> Path:
    path = tmp_path / "series.csv"
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def fails_with(path: Path, message: str, **options) -> str:
    """The error :func:`read_csv` raises: a one-line DataError starting with the file."""
    with pytest.raises(DataError) as err:
        read_csv(path, **options)
    text = str(err.value)
    assert text.startswith(f"{path}, line ") and message in text, text
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("2024-01-01 01:00:00,2", ",2", "line 3, column 'timestamp': no timestamp"),
        ("2024-01-01 01:00:00,2", "   ,2", "line 3, column 'timestamp': no timestamp"),
        ("2024-01-01 01:00:00,2", "NaT,2", "line 3, column 'timestamp': 'NaT' is not a timestamp"),
        ("2024-01-01 02:00:00,4", "nat,4", "line 4, column 'timestamp': 'nat' is not a timestamp"),
    ],
)
def test_an_empty_or_nat_timestamp_is_an_error(tmp_path, old, new, message):
    """Before: NumPy read both as not-a-time and the scores file got rows like ``Na ,0,...``."""
    fails_with(write(tmp_path, GOOD.replace(old, new)), message)
    # a repair never makes a time up either
    options = {"on_missing": "interpolate", "on_unsorted": "sort", "on_duplicate": "mean"}
    fails_with(write(tmp_path, GOOD.replace(old, new)), message, **options)


def test_a_field_over_the_csv_limit_names_the_line(tmp_path):
    """Before: ``_csv.Error: field larger than field limit (131072)``, a traceback."""
    long = GOOD.replace(",2\n", "," + "9" * 200_000 + "\n")
    fails_with(write(tmp_path, long), "line 3: field larger than field limit")
    unclosed = GOOD.replace(",2\n", ',"2\n') + ("2024-01-02 00:00:00,5\n" * 7000)
    fails_with(write(tmp_path, unclosed), "line 3: field larger than field limit")


def test_invalid_utf8_names_line_and_column(tmp_path):
    """Before: a UnicodeDecodeError naming neither the file nor the line."""
    data = GOOD.encode().replace(b",2\n", b",2\xff\n")
    fails_with(write(tmp_path, data), "line 3: invalid UTF-8 (byte 0xff at column 22)")


def test_a_nul_character_names_line_and_column(tmp_path):
    data = GOOD.replace(",4\n", ",4\0\n")
    fails_with(write(tmp_path, data), "line 4, column 22: NUL character")
    utf16 = GOOD.encode("utf-16-le")  # a spreadsheet's "Unicode text": NULs everywhere
    fails_with(write(tmp_path, utf16), "line 1, column 2: NUL character")


def test_a_byte_order_mark_before_the_header_is_read(tmp_path):
    """Before: ``line 1: no 'timestamp' column in ['\\ufefftimestamp', 'a']``."""
    series = read_csv(write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode()))
    assert series.columns == ["a"] and series.values[:, 0].tolist() == [1.0, 2.0, 4.0]
    assert not np.isnat(series.timestamps).any()


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", "-inf", "1e999", "-nan"])
def test_nan_and_infinite_values_are_refused(tmp_path, cell):
    """NaN counts as missing (an error unless interpolation is asked for); infinities and
    overflows are never numbers."""
    path = write(tmp_path, GOOD.replace(",2\n", f",{cell}\n"))
    message = "missing value" if cell.lower() == "nan" else f"{cell!r} is not a number"
    fails_with(path, f"line 3, column 'a': {message}")


def test_an_asked_for_repair_returns_no_nan(tmp_path):
    series = read_csv(write(tmp_path, GOOD.replace(",2\n", ",NaN\n")), on_missing="interpolate")
    assert series.values[:, 0].tolist() == [1.0, 2.5, 4.0] and np.isfinite(series.values).all()
    only_missing = "timestamp,a,b\n2024-01-01,,1\n2024-01-02,NA,2\n"
    with pytest.raises(TimeSeriesError) as err:
        read_csv(write(tmp_path, only_missing), on_missing="interpolate")
    assert str(err.value).startswith(f"{tmp_path / 'series.csv'}, column 'a': every value")


def test_a_directory_is_not_reported_as_missing(tmp_path):
    with pytest.raises(DataError, match=re.escape(f"{tmp_path}: is a directory, expected a file")):
        read_csv(tmp_path)
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 'no.csv'}: file not found")):
        read_csv(tmp_path / "no.csv")


def test_the_command_line_says_one_line_and_exits_2(tmp_path):
    """``attnkit train`` on a CSV with a not-a-time timestamp: exit code 2, the file and line."""
    csv = write(tmp_path, GOOD.replace("2024-01-01 01:00:00,2", "NaT,2"))
    config = tmp_path / "c.yaml"
    config.write_text(
        f"task: anomaly-detection\ndata:\n  source: csv\n  files: ['{csv}']\n"
        "detector:\n  window: 4\n  steps: 1\n"
    )
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if "error" in ln]  # besides INFO logging
    assert len(lines) == 1 and "Traceback" not in result.output
    assert f"{csv}, line 3, column 'timestamp': 'NaT' is not a timestamp" in lines[0]


def test_timestamps_with_a_utc_offset_are_converted_and_said(tmp_path, caplog):
    """NumPy converts them with a UserWarning only; the reader logs the conversion instead."""
    path = write(
        tmp_path, "timestamp,value\n2024-01-01T00:00:00+01:00,1\n2024-01-01T01:30:00+01:00,2\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing leaks as a Python warning
        series = read_csv(path)
    assert series.timestamps.astype(str).tolist() == ["2023-12-31T23:00:00", "2024-01-01T00:30:00"]
    assert "timestamps with a UTC offset converted to UTC" in caplog.text
