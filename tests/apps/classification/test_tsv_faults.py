"""Issue 15: bad classification TSV files are errors naming the file, the line and (where
there is one) the column; a BOM before the header is read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnkit.apps.classification.config import ClassifierDataConfig, TextClassificationConfig
from attnkit.apps.classification.data import TSVError, load_split, read_labelled, read_tsv
from attnkit.cli import app
from attnkit.errors import DataError

GOOD = "sentence\tlabel\ngood film\t1\n\nbad film\t0\n"


def write(tmp_path: Path, data: str | bytes, name: str = "t.tsv") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def config(tmp_path: Path, train: Path, dev: Path, num_classes: int = 2):
    data = ClassifierDataConfig(source="tsv", train_file=str(train), dev_file=str(dev))
    return TextClassificationConfig(num_classes=num_classes, data=data)


def test_an_out_of_range_label_names_file_line_and_range(tmp_path):
    """Before: ``train: label 3 is outside 0..1``, naming no file."""
    train = write(tmp_path, GOOD.replace("bad film\t0", "bad film\t3"))
    dev = write(tmp_path, GOOD, "dev.tsv")
    with pytest.raises(TSVError) as err:
        load_split(config(tmp_path, train, dev), "train")
    assert str(err.value) == (
        f"{train}, line 4: label 3 in column 'label' is outside 0..1 (num_classes is 2)"
    )
    write(tmp_path, GOOD.replace("good film\t1", "good film\t-1"), "dev.tsv")
    with pytest.raises(TSVError, match=re.escape(f"{dev}, line 2: label -1")):
        load_split(config(tmp_path, train, dev), "dev")
    assert [e.label for e in load_split(config(tmp_path, train, dev, 4), "train")] == [1, 3]


def test_a_nul_character_names_line_and_column(tmp_path):
    path = write(tmp_path, GOOD.replace("bad film", "bad\0film"))
    with pytest.raises(TSVError) as err:
        read_labelled(path)
    assert str(err.value).startswith(f"{path}, line 4, column 4: NUL character")


def test_invalid_utf8_names_line_and_column(tmp_path):
    path = write(tmp_path, GOOD.encode().replace(b"bad film", b"bad f\xc3lm"))
    with pytest.raises(TSVError) as err:
        read_labelled(path)
    assert str(err.value) == f"{path}, line 4: invalid UTF-8 (byte 0xc3 at column 6)"


def test_a_byte_order_mark_before_the_header_is_read(tmp_path):
    """Before: ``line 1: missing column(s) ['sentence']; the header has ['\\ufeffsentence', ...``"""
    path = write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode())
    assert read_tsv(path, ["sentence", "label"])[0] == {"sentence": "good film", "label": "1"}
    crlf = write(tmp_path, b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode(), "crlf.tsv")
    assert [(e.text, e.label) for e in read_labelled(crlf)] == [("good film", 1), ("bad film", 0)]


def test_a_directory_is_not_reported_as_missing(tmp_path):
    """Before: ``FileNotFoundError: ...: no such file`` for a directory."""
    with pytest.raises(DataError, match=re.escape(f"{tmp_path}: is a directory, expected a file")):
        read_labelled(tmp_path)


def test_the_command_line_says_one_line_and_exits_2(tmp_path):
    train = write(tmp_path, GOOD.replace("bad film\t0", "bad film\t2"))
    yaml = tmp_path / "c.yaml"
    yaml.write_text(
        "task: text-classification\nname: x\ndata:\n  source: tsv\n"
        f"  train_file: '{train}'\n  dev_file: '{train}'\n"
    )
    result = CliRunner().invoke(app, ["train", str(yaml), "-o", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if "error" in ln]  # besides INFO logging
    assert len(lines) == 1 and "Traceback" not in result.output
    assert f"{train}, line 4: label 2 in column 'label' is outside 0..1" in lines[0]
