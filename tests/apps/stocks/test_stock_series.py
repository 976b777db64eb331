"""Reading stock series strictly: the values of a small CSV and of the paper's file, and every
bad input as a one-line StockDataError naming the file, the line and the column."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import attnkit.datadir
from attnkit.apps.stocks.series import PriceSeries, StockDataError, paper_csv, read_series
from attnkit.errors import DataError

GOOD = (
    ",ticker,date,close,sentiment\n"
    "0,AAA,2015-01-02,10.5,0.25\n"
    "1,BBB,2015-01-02,99.0,-1\n"
    "2,AAA,2015-01-05T16:00:00,11,0\n"
    "3,AAA,2015-01-06,1.25e1,-0.5\n"
)
AAA = {"where": {"ticker": "AAA"}, "columns": ["close", "sentiment"]}


def write(tmp_path: Path, data: str | bytes, name: str = "prices.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def fails_with(path: Path, message: str, **options) -> str:
    """The StockDataError :func:`read_series` raises: one line, starting with the file."""
    options = {"columns": ["close"], **options}
    with pytest.raises(StockDataError) as err:
        read_series(path, **options)
    text = str(err.value)
    assert isinstance(err.value, DataError)
    assert text.startswith(str(path)) and message in text, text
    assert "\n" not in text
    return text


def test_reads_the_rows_of_one_ticker(tmp_path):
    s = read_series(write(tmp_path, GOOD), **AAA)
    assert isinstance(s, PriceSeries) and len(s) == 3
    assert s.dates.dtype == np.dtype("datetime64[D]")
    assert [str(d) for d in s.dates] == ["2015-01-02", "2015-01-05", "2015-01-06"]
    np.testing.assert_array_equal(s.values, [[10.5, 0.25], [11.0, 0.0], [12.5, -0.5]])
    assert s.values.dtype == np.float64 and s.columns == ["close", "sentiment"]
    np.testing.assert_array_equal(s.lines, [2, 4, 5])
    np.testing.assert_array_equal(s.column("sentiment"), [0.25, 0.0, -0.5])
    assert s.source == str(tmp_path / "prices.csv")
    with pytest.raises(KeyError, match="volume"):
        s.column("volume")


def test_columns_order_date_column_bom_and_blank_lines(tmp_path):
    text = "\ufeffday,p,q\n\n2020-02-03,1,2\n\n2020-02-04, 3 ,4\n"
    s = read_series(write(tmp_path, text), columns=["q", "p"], date_column="day")
    np.testing.assert_array_equal(s.values, [[2.0, 1.0], [4.0, 3.0]])
    np.testing.assert_array_equal(s.lines, [3, 5])


def test_columns_argument_is_checked(tmp_path):
    path = write(tmp_path, GOOD)
    for columns in ("close", [], ["close", "close"]):
        with pytest.raises(ValueError, match="distinct names"):
            read_series(path, columns=columns)


@pytest.mark.parametrize(
    ("data", "message", "options"),
    [
        ("", "empty file", {}),
        ("\n\n", "empty file", {}),
        ("date,close\n", "line 1: no rows after the header", {}),
        ("date,open\n2015-01-02,1\n", "line 1: no column 'close' in the header ['date', 'open']",
         {}),
        ("day,close\n2015-01-02,1\n", "line 1: no column 'date'", {}),
        ("date,close\n2015-01-02,1\n", "line 1: no column 'ticker'", {"where": {"ticker": "A"}}),
        ("date,close,close\n2015-01-02,1,2\n", "line 1: column 'close' appears twice", {}),
        ("date,close\n2015-01-02,1\n2015-01-05,2,3\n", "line 3: 3 fields, the header has 2", {}),
        ("date,close\n2015-01-02,1\n2015-01-05\n", "line 3: 1 fields, the header has 2", {}),
        ("date,close\n2015-01-02,1\n2015-13-05,2\n",
         "line 3, column 'date': '2015-13-05' is not an ISO date", {}),
        ("date,close\n2015-01-02,1\n\n,2\n", "line 4, column 'date': '' is not an ISO date", {}),
        ("date,close\n2015-01-02,1\n2015-01-05 9:00,2\n",
         "line 3, column 'date': '2015-01-05 9:00' is not", {}),
        ("date,close\n2015-01-02,1\n2015-01-05,abc\n",
         "line 3, column 'close': 'abc' is not a finite number", {}),
        ("date,close\n2015-01-02,1\n2015-01-05, \n", "line 3, column 'close': missing value", {}),
        ("date,close\n2015-01-02,nan\n", "line 2, column 'close': 'nan' is not a finite", {}),
        ("date,close\n2015-01-02,-inf\n", "line 2, column 'close': '-inf' is not a finite", {}),
        ("date,close\n2015-01-02,1\n2015-01-05,2\n2015-01-05,3\n",
         "line 4: date 2015-01-05 repeats 2015-01-05 on line 3", {}),
        ("date,close\n2015-01-05,1\n2015-01-02,2\n",
         "line 3: date 2015-01-02 is earlier than 2015-01-05 on line 2", {}),
        ("date,close\n2015-01-05T10:00,1\n2015-01-05T15:00,2\n",
         "line 3: date 2015-01-05 repeats", {}),
        ("date,close\n2015-01-02,1\n2015-01-05,\"2\n", "line 3: field larger than field limit",
         {}),
    ],
)  # fmt: skip
def test_bad_files_name_the_file_line_and_column(tmp_path, data, message, options):
    if "field limit" in message:
        data += "9" * 200_000 + "\n"
    fails_with(write(tmp_path, data), message, **options)


def test_a_bad_value_in_a_row_that_where_drops_is_not_read(tmp_path):
    data = "ticker,date,close\nA,2015-01-02,1\nB,2015-01-01,oops\nA,2015-01-05,2\n"
    s = read_series(write(tmp_path, data), columns=["close"], where={"ticker": "A"})
    np.testing.assert_array_equal(s.lines, [2, 4])
    fails_with(write(tmp_path, data), "line 3, column 'close': 'oops'", where={"ticker": "B"})


def test_no_row_left_after_where_names_the_values(tmp_path):
    text = fails_with(
        write(tmp_path, GOOD), "no row has ticker = 'ZZZ'", **{**AAA, "where": {"ticker": "ZZZ"}}
    )
    assert "'AAA', 'BBB'" in text
    many = "ticker,date,close\n" + "".join(f"T{i},2015-01-02,1\n" for i in range(12))
    text = fails_with(write(tmp_path, many), "no row has ticker = 'X'", where={"ticker": "X"})
    assert "'T9', ..." in text and "'T10'" not in text
    # conditions apply in turn: the values named are those left by the earlier ones
    text = fails_with(
        write(tmp_path, GOOD), "no row has close = '99.0'", where={"ticker": "AAA", "close": "99.0"}
    )
    assert "'10.5', '11', '1.25e1'" in text


def test_missing_file_directory_and_invalid_utf8(tmp_path):
    fails_with(tmp_path / "absent.csv", "file not found")
    fails_with(tmp_path, "is a directory")
    fails_with(write(tmp_path, b"date,close\n2015-01-02,\xff\n"), "line 2: invalid UTF-8")
    fails_with(write(tmp_path, "date,close\n2015-01-02,1\0\n"), "line 2, column 13: NUL")


def test_paper_csv_resolves_the_data_dir(tmp_path, monkeypatch):
    (tmp_path / "stocks").mkdir()
    write(tmp_path / "stocks", "x", "df_cut.csv")
    assert paper_csv(tmp_path) == tmp_path / "stocks" / "df_cut.csv"
    assert paper_csv(str(tmp_path)) == tmp_path / "stocks" / "df_cut.csv"
    monkeypatch.setenv("ATTNKIT_DATA_DIR", str(tmp_path))
    assert paper_csv() == tmp_path / "stocks" / "df_cut.csv"
    monkeypatch.delenv("ATTNKIT_DATA_DIR")
    monkeypatch.setattr(attnkit.datadir, "CHECKOUT", tmp_path / "elsewhere")  # no fallback
    work = tmp_path / "repo"
    work.mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(StockDataError) as err:
        paper_csv()
    text = str(err.value)
    assert text.startswith(str(Path("..") / "shared" / "data" / "stocks" / "df_cut.csv"))
    assert "../shared/data/stocks" in text and "never copied into the repository" in text
    (tmp_path / "shared" / "data" / "stocks").mkdir(parents=True)
    write(tmp_path / "shared" / "data" / "stocks", "x", "df_cut.csv")
    assert paper_csv().resolve() == (tmp_path / "shared/data/stocks/df_cut.csv").resolve()
    with pytest.raises(StockDataError, match=r"^.*elsewhere.stocks.df_cut\.csv: .*not found"):
        paper_csv(tmp_path / "elsewhere")


PAPER = Path(os.environ.get("ATTNKIT_DATA_DIR") or "/work/shared/data") / "stocks" / "df_cut.csv"


@pytest.mark.skipif(not PAPER.is_file(), reason=f"the paper's data not found at {PAPER}")
def test_the_papers_file():
    amzn = read_series(PAPER, columns=["close", "conv_filter"], where={"ticker": "AMZN"})
    assert len(amzn) == 1258 and amzn.columns == ["close", "conv_filter"]
    assert str(amzn.dates[0]) == "2015-01-02" and str(amzn.dates[-1]) == "2019-12-31"
    assert amzn.values[0, 0] == 308.5199890136719
    assert amzn.values[0, 1] == 0.3236022923211078
    assert amzn.lines[0] == 2 and np.isfinite(amzn.values).all()
    tmo = read_series(PAPER, columns=["close"], where={"ticker": "TMO"})
    assert len(tmo) == 1255 and tmo.values.shape == (1255, 1)
    assert np.all(np.diff(tmo.dates.astype(np.int64)) > 0)
