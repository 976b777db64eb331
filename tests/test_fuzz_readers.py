"""Generated files through every reader: parallel text, translation TSV, Tatoeba export,
classification TSV, time-series CSV and im2latex's formulas.tsv. Each file starts from a valid
one and is damaged by generated edits (random bytes, invalid UTF-8, NUL, a BOM, stray tabs and
quotes, blank lines, very long fields, bad labels, bad numbers and timestamps). Every read either
succeeds, with no NaN or NaT in what it returns, or raises :class:`~attnkit.errors.DataError`
whose message starts with the file's path (names it, for an image a formulas.tsv lists); any
other exception fails the test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from attnkit.apps.anomaly.timeseries import read_csv
from attnkit.apps.classification.data import read_labelled
from attnkit.apps.im2latex.pairs import read_folder
from attnkit.apps.stocks.series import read_series
from attnkit.apps.translation.data.corpora import read_parallel, read_tatoeba, read_tsv
from attnkit.errors import DataError
from fuzz_counts import record

FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
PIECES = st.sampled_from(
    [b"\xff", b"\xc3", b"\x00", b"\xef\xbb\xbf", b"\t", b"\t\t", b'"', b"\r", b"\n", b"\n\n",
     b" ", b",", b"nan", b"inf", b"NaT", b"-", b"1e999", b"2024-13-45", b"\xe2\x80\xa8",
     "ü".encode(), b"x" * 140_000]
)  # fmt: skip
EDITS = st.lists(st.tuples(st.floats(0, 1), PIECES | st.binary(max_size=6)), max_size=6)


def damage(data: bytes, edits) -> bytes:
    """``data`` with each ``(where, piece)`` inserted at the fraction ``where`` of its length."""
    for where, piece in edits:
        at = int(where * len(data))
        data = data[:at] + piece + data[at:]
    return data


def _expect(read, path: Path, target: str, check=None) -> None:
    """``read()`` succeeds (and passes ``check``) or fails with a DataError naming ``path``."""
    try:
        result = read()
    except DataError as err:
        assert str(err).startswith(str(path)), str(err)
        assert "\n" not in str(err), str(err)
        record(target, "DataError, file named")
        return
    if check is not None:
        check(result)
    record(target, "read")


@FUZZ
@given(src=EDITS, tgt=EDITS)
def test_parallel_text(tmp_path_factory, src, tgt):
    d = tmp_path_factory.mktemp("par")
    (d / "a.en").write_bytes(damage(b"the cat sat\non the mat\nhello\n", src))
    (d / "a.de").write_bytes(damage(b"die katze sass\nauf der matte\nhallo\n", tgt))
    paths = (d / "a.en", d / "a.de")
    try:
        read_parallel(*paths)
        record("parallel text", "read")
    except DataError as err:  # a line-count mismatch names both files, others the one at fault
        assert str(err).startswith(tuple(str(p) for p in paths)), str(err)
        record("parallel text", "DataError, file named")


@FUZZ
@given(edits=EDITS, zipped=st.booleans())
def test_translation_tsv_and_tatoeba(tmp_path_factory, edits, zipped):
    path = tmp_path_factory.mktemp("tsv") / "pairs.txt"
    path.write_bytes(damage(b"Hi.\tHallo!\tCC-BY 2.0\nRun!\tLauf!\tCC-BY 2.0\n", edits))
    if zipped:
        _expect(lambda: read_tatoeba(path), path, "tatoeba export (.txt)")
    else:
        _expect(lambda: read_tsv(path), path, "translation TSV")


@FUZZ
@given(edits=EDITS, classes=st.sampled_from([None, 2]))
def test_classification_tsv(tmp_path_factory, edits, classes):
    path = tmp_path_factory.mktemp("cls") / "train.tsv"
    path.write_bytes(damage(b"sentence\tlabel\na fine film\t1\nnever dull\t0\nbad\t1\n", edits))

    def check(rows):
        assert all(classes is None or 0 <= r.label < classes for r in rows)

    _expect(lambda: read_labelled(path, num_classes=classes), path, "classification TSV", check)


@FUZZ
@given(edits=EDITS, repair=st.booleans())
def test_time_series_csv(tmp_path_factory, edits, repair):
    path = tmp_path_factory.mktemp("csv") / "series.csv"
    rows = "".join(f"2024-01-01 {h:02d}:00:00,{h * 1.5},{h % 3}\n" for h in range(8))
    path.write_bytes(damage(("timestamp,value,other\n" + rows).encode(), edits))
    options = dict(on_missing="interpolate", on_unsorted="sort", on_duplicate="mean")

    def check(series):
        assert not np.isnat(series.timestamps).any()
        assert np.isfinite(series.values).all()

    _expect(lambda: read_csv(path, **(options if repair else {})), path, "time-series CSV", check)


@FUZZ
@given(edits=EDITS, filtered=st.booleans())
def test_stock_prices_csv(tmp_path_factory, edits, filtered):
    path = tmp_path_factory.mktemp("stocks") / "prices.csv"
    rows = "".join(
        f"{i},{'AMZN' if i % 2 else 'TMO'},2019-01-{i + 1:02d},{100 + i},0.{i}\n" for i in range(8)
    )
    path.write_bytes(damage((",ticker,date,close,conv_filter\n" + rows).encode(), edits))
    where = {"ticker": "AMZN"} if filtered else None

    def check(series):
        assert np.isfinite(series.values).all() and (np.diff(series.dates).astype(int) > 0).all()

    read = lambda: read_series(path, columns=["close", "conv_filter"], where=where)  # noqa: E731
    _expect(read, path, "stock prices CSV", check)


@FUZZ
@given(edits=EDITS, strict=st.booleans())
def test_im2latex_formulas_tsv(tmp_path_factory, edits, strict):
    root = tmp_path_factory.mktemp("im2latex")
    Image.fromarray(np.pad(np.zeros((6, 20), np.uint8), 4, constant_values=255)).save(
        root / "a.png"
    )
    path = root / "formulas.tsv"
    path.write_bytes(damage(b"a.png\tx^{2}\na.png\t\\frac{a}{b}\n", edits))
    try:  # an image error starts with the image's path (which may lie outside root)
        read_folder(root, strict=strict)
        record("im2latex formulas.tsv", "read")
    except DataError as err:
        assert str(path) in str(err) and "\n" not in str(err), str(err)
        record("im2latex formulas.tsv", "DataError, file named")
