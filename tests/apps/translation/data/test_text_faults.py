"""Issue 15: faults in parallel text are errors naming the file, the line and the column; a
directory is not "not found"; a corpus without training text names its files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from data_helpers import at
from typer.testing import CliRunner

from attnkit.apps.translation.data.cleaning import clean_corpus
from attnkit.apps.translation.data.corpora import (
    DataError,
    read_lines,
    read_parallel,
    read_plain_corpus,
    read_tatoeba,
    read_tsv,
)
from attnkit.apps.translation.data.tokenise import train_tokenizer
from attnkit.cli import app
from attnkit.textfiles import decode_text


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_a_nul_character_in_parallel_text_names_file_line_and_column(tmp_path):
    """Before: the NUL was read into the sentence."""
    src = write(tmp_path / "train.en", "one\ntwo\n")
    tgt = write(tmp_path / "train.de", "eins\nzw\0ei\n")
    with pytest.raises(DataError, match=at(tgt, ", line 2, column 3: NUL character")):
        read_parallel(src, tgt)


def test_a_nul_character_in_tab_separated_text(tmp_path):
    path = write(tmp_path / "p.tsv", "Hi.\tHallo!\nRun!\tLa\0uf!\n")
    with pytest.raises(DataError, match=at(path, ", line 2, column 8: NUL character")):
        read_tsv(path)
    archive = tmp_path / "deu-eng.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("deu.txt", "\0Hi.\tHallo!\tattr\n")
    with pytest.raises(DataError, match=at(archive, "!deu.txt, line 1, column 1: NUL")):
        read_tatoeba(archive)


def test_a_utf16_file_is_refused_at_its_first_nul(tmp_path):
    path = write(tmp_path / "x.de", "Hallo\n".encode("utf-16-le"))
    with pytest.raises(DataError, match=at(path, ", line 1, column 2: NUL character")):
        read_lines(path)


def test_invalid_utf8_columns_count_characters(tmp_path):
    path = write(tmp_path / "x.de", "gut\nzwei Wörter ".encode() + b"\xff\n")
    with pytest.raises(DataError) as err:
        read_lines(path)
    assert str(err.value) == f"{path}, line 2: invalid UTF-8 (byte 0xff at column 13)"


def test_a_byte_order_mark_only_at_the_start_is_removed():
    assert decode_text(b"\xef\xbb\xbfa\n\xef\xbb\xbfb", "x") == "a\n\ufeffb"


def test_a_directory_given_as_a_file_is_named_as_such(tmp_path):
    """Before: ``...: file not found`` for a directory that exists."""
    (tmp_path / "train.en").mkdir()
    with pytest.raises(DataError, match=at(tmp_path / "train.en", ": is a directory, expected")):
        read_lines(tmp_path / "train.en")
    for split in ("train", "valid", "test"):
        write(tmp_path / f"{split}.de", "a\n")
        if split != "train":
            write(tmp_path / f"{split}.en", "a\n")
    with pytest.raises(DataError, match=at(tmp_path / "train.en", ": is a directory, expected")):
        read_plain_corpus(tmp_path, "en", "de")
    with pytest.raises(DataError, match=at(tmp_path, ": is a directory, expected a file")):
        read_tatoeba(tmp_path)


def _plain_corpus(tmp_path: Path, train_en: str, train_de: str) -> Path:
    for split, (en, de) in {"train": (train_en, train_de), "valid": ("a\n", "b\n")}.items():
        write(tmp_path / f"{split}.en", en)
        write(tmp_path / f"{split}.de", de)
    write(tmp_path / "test.en", "a\n")
    write(tmp_path / "test.de", "b\n")
    return tmp_path


@pytest.mark.parametrize(
    ("en", "de", "counts"),
    [
        ("", "", "0 pairs read, 0 dropped with an empty side"),
        ("a\n\nc\n", "\nb\n\n", "3 pairs read, 3 dropped with an empty side"),
    ],
)
def test_an_empty_training_split_names_its_files(tmp_path, en, de, counts):
    """Before: ``train_tokenizer: no training text``, naming nothing."""
    corpus = clean_corpus(read_plain_corpus(_plain_corpus(tmp_path, en, de), "en", "de"))
    with pytest.raises(DataError) as err:
        train_tokenizer(corpus, tmp_path / "tok", vocab_size=50)
    where = f"{tmp_path / 'train.en'} and {tmp_path / 'train.de'}"
    assert (
        str(err.value) == f"{where}: no training text for the tokenizer ({counts}, 0 as too long)"
    )
    with pytest.raises(DataError, match=at(where, ": no training text")):
        train_tokenizer(corpus.swapped(), tmp_path / "tok", vocab_size=50, joint=False)


def test_training_on_an_empty_file_exits_2_naming_it(tmp_path):
    """``attnkit train`` on a ``files`` corpus whose training files are empty (the command
    refuses in :mod:`attnkit.apps.translation.prepare` before the tokenizer would)."""
    _plain_corpus(tmp_path, "", "")
    config = tmp_path / "c.yaml"
    config.write_text(
        "name: x\ndata:\n  corpus: files\n  src_lang: en\n  tgt_lang: de\n"
        f"  train: '{tmp_path / 'train'}'\n  valid: '{tmp_path / 'valid'}'\n"
        "model:\n  embed_dim: 8\n  hidden_dim: 8\ntrain:\n  epochs: 1\n"
    )
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if "error" in ln]  # besides INFO logging
    assert len(lines) == 1 and "Traceback" not in result.output
    assert f"{tmp_path / 'train.en'} and {tmp_path / 'train.de'}: " in lines[0]
