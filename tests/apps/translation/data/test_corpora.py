"""Readers, their error messages (file and line) and the counted cleaning step."""

from __future__ import annotations

import gzip
import logging
import zipfile

import pytest
from data_helpers import at

from attnkit.apps.translation.data.cleaning import clean_corpus, clean_pairs
from attnkit.apps.translation.data.corpora import (
    DataError,
    Pair,
    ParallelCorpus,
    read_lines,
    read_multi30k,
    read_parallel,
    read_plain_corpus,
    read_tatoeba,
    read_tsv,
    write_corpus,
)


def _write(path, text: str | bytes):
    data = text.encode("utf-8") if isinstance(text, str) else text
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- plain text


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_read_parallel_plain_and_gzip(tmp_path, suffix):
    src = _write(tmp_path / f"a.en{suffix}", "Hello .\n  two words \nthree\n")
    tgt = _write(tmp_path / f"a.de{suffix}", "Hallo .\nzwei Wörter\ndrei\n")
    assert read_parallel(src, tgt) == [
        Pair("Hello .", "Hallo ."),
        Pair("two words", "zwei Wörter"),
        Pair("three", "drei"),
    ]


def test_lines_split_on_newline_only(tmp_path):
    # BOM, CRLF, no final newline, and a U+2028 inside a sentence (str.splitlines would split it)
    path = _write(tmp_path / "x.txt", "\ufeffone\r\ntwo\u2028still two\r\nthree")
    assert read_lines(path) == ["one", "two\u2028still two", "three"]


def test_mismatched_line_counts_name_both_files_and_counts(tmp_path):
    src = _write(tmp_path / "train.en", "a\nb\nc\n")
    tgt = _write(tmp_path / "train.de", "a\nb\n")
    with pytest.raises(DataError) as err:
        read_parallel(src, tgt)
    message = str(err.value)
    assert str(src) in message and str(tgt) in message
    assert "3 lines" in message and "2 lines" in message and "line 3" in message
    assert "\n" not in message


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_invalid_utf8_names_file_and_line(tmp_path, suffix):
    path = _write(tmp_path / f"bad.de{suffix}", b"gut\nauch gut\nschl\xff echt\nok\n")
    with pytest.raises(DataError) as err:
        read_lines(path)
    assert str(err.value) == f"{path}, line 3: invalid UTF-8 (byte 0xff at column 5)"


def test_invalid_utf8_through_read_parallel(tmp_path):
    src = _write(tmp_path / "s.en", "a\nb\n")
    tgt = _write(tmp_path / "s.de", b"a\n\xc3\n")
    with pytest.raises(DataError, match=at(tgt, ", line 2: invalid UTF-8")):
        read_parallel(src, tgt)


def test_missing_file(tmp_path):
    present = _write(tmp_path / "s.en", "a\n")
    with pytest.raises(DataError, match=at(tmp_path / "nope.de", ": file not found")):
        read_parallel(present, tmp_path / "nope.de")


def test_broken_gzip(tmp_path):
    path = tmp_path / "x.en.gz"
    path.write_bytes(b"this is not gzip")
    with pytest.raises(DataError, match=at(path, ": not a readable gzip file")):
        read_lines(path)


# --------------------------------------------------------------------------- TSV and Tatoeba


def test_tsv(tmp_path):
    path = _write(tmp_path / "p.tsv", "Hi.\tHallo!\n\nRun!\tLauf!\n")
    assert read_tsv(path) == [Pair("Hi.", "Hallo!"), Pair("", ""), Pair("Run!", "Lauf!")]


def test_tsv_line_without_tab(tmp_path):
    path = _write(tmp_path / "p.tsv", "Hi.\tHallo!\nno tab here\n")
    with pytest.raises(DataError) as err:
        read_tsv(path)
    assert str(err.value) == f"{path}, line 2: found no tab, expected 2 columns"


def test_tsv_with_three_columns_is_an_error(tmp_path):
    path = _write(tmp_path / "p.tsv", "a\tb\tc\n")
    with pytest.raises(DataError, match=at(path, ", line 1: found 3 tab-separated columns")):
        read_tsv(path)


def test_tatoeba_txt_ignores_attribution(tmp_path):
    text = "Hi.\tHallo!\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123\nRun!\tLauf!\n"
    path = _write(tmp_path / "deu.txt", text)
    assert read_tatoeba(path) == [Pair("Hi.", "Hallo!"), Pair("Run!", "Lauf!")]
    bad = _write(tmp_path / "bad.txt", "Hi.\tHallo!\nRun!\n")
    with pytest.raises(DataError, match=at(bad, ", line 2: found no tab, expected 2 or 3")):
        read_tatoeba(bad)


def test_tatoeba_zip(tmp_path):
    path = tmp_path / "deu-eng.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("_about.txt", "about")
        archive.writestr("deu.txt", "Hi.\tHallo!\tattr\nGo.\tGeh.\tattr\n")
    assert read_tatoeba(path) == [Pair("Hi.", "Hallo!"), Pair("Go.", "Geh.")]
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("deu.txt", b"Hi.\tHallo!\nGo.\tG\xffh.\n")
    with pytest.raises(DataError, match=at(path, "!deu.txt, line 2: invalid UTF-8")):
        read_tatoeba(path)
    with pytest.raises(DataError, match="file not found"):
        read_tatoeba(tmp_path / "missing.zip")


# --------------------------------------------------------------------------- cleaning


def test_clean_pairs_counts_and_logs(caplog):
    pairs = [Pair("a b", "c d"), Pair("", "x"), Pair("x", " ".strip()), Pair("a " * 6, "b")]
    with caplog.at_level(logging.INFO, logger="attnkit.apps.translation.data.corpora"):
        kept, counts = clean_pairs(pairs, max_len=5, where="toy/train")
    assert kept == [Pair("a b", "c d")]
    assert (counts.kept, counts.empty, counts.too_long) == (1, 2, 1)
    record = caplog.records[-1]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "toy/train: kept 1 pairs, dropped 2 empty and 1 longer than 5 tokens"
    )


def test_clean_pairs_with_a_subword_length():
    pairs = [Pair("abcdef", "x"), Pair("ab", "xy")]
    kept, counts = clean_pairs(pairs, max_len=3, length_fn=len)  # characters as "subwords"
    assert kept == [Pair("ab", "xy")] and counts.too_long == 1


def test_clean_corpus_keeps_long_test_sentences():
    long = Pair("w " * 30, "v " * 30)
    corpus = ParallelCorpus("toy", {"train": [long, Pair("a", "b")], "test": [long, Pair("", "")]})
    cleaned = clean_corpus(corpus, max_len=10)
    assert cleaned.train == [Pair("a", "b")] and cleaned.test == [long]
    assert cleaned.dropped["train"].too_long == 1 and cleaned.dropped["test"].empty == 1


def test_write_and_read_plain_corpus(tmp_path):
    splits = {s: [Pair(f"{s} {i}", f"{s} ü {i}") for i in range(3)] for s in ("train", "valid")}
    splits["test"] = [Pair("test", "Test")]
    corpus = ParallelCorpus("toy", splits, "en", "de")
    paths = write_corpus(corpus, tmp_path / "c")
    assert sorted(p.name for p in paths) == sorted(
        f"{s}.{lang}" for s in ("train", "valid", "test") for lang in ("en", "de")
    )
    again = read_plain_corpus(tmp_path / "c", "en", "de")
    assert again.splits == corpus.splits
    assert corpus.swapped().train[0] == Pair("train ü 0", "train 0")
    with pytest.raises(DataError, match="train.fr"):
        read_plain_corpus(tmp_path / "c", "en", "fr")


# --------------------------------------------------------------------------- real data


def test_multi30k_real(data_dir):
    corpus = read_multi30k(data_dir / "multi30k", "de", "en")
    assert {k: len(v) for k, v in corpus.splits.items()} == {
        "train": 29000,
        "valid": 1014,
        "test": 1000,
    }
    assert all(p.src and p.tgt for p in corpus.train)
    assert corpus.train[0].src.startswith("Zwei junge weiße Männer")
    assert corpus.train[0].tgt.startswith("Two young, White males")


def test_multi30k_missing_language(data_dir):
    with pytest.raises(DataError, match=r"train\.xx\.gz: file not found"):
        read_multi30k(data_dir / "multi30k", "xx", "en")


def test_tatoeba_real(tatoeba_zip):
    pairs = read_tatoeba(tatoeba_zip)
    assert len(pairs) == 169_813
    assert pairs[0] == Pair("Hi.", "Hallo!")
