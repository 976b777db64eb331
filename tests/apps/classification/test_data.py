"""The TSV reader, SST-2 and the word vocabulary."""

from __future__ import annotations

import pytest

from attnkit.apps.classification.data import (
    TSVError,
    WordVocab,
    load_sst2,
    read_labelled,
    read_tsv,
    split_words,
)
from attnkit.errors import DataError


def test_named_columns_in_any_order_are_read_and_stripped(tmp_path):
    path = tmp_path / "a.tsv"
    path.write_text("label\tid\tsentence\n1\t7\tgood film \n\n0\t8\tbad\n", encoding="utf-8")
    assert read_tsv(path, ["sentence", "label"]) == [
        {"sentence": "good film", "label": "1"},
        {"sentence": "bad", "label": "0"},
    ]
    examples = read_labelled(path)
    assert [(e.text, e.label) for e in examples] == [("good film", 1), ("bad", 0)]


def test_missing_column_names_file_and_line(tmp_path):
    path = tmp_path / "b.tsv"
    path.write_text("text\tlabel\nfine\t1\n", encoding="utf-8")
    with pytest.raises(TSVError, match=r"b\.tsv, line 1: missing column\(s\) \['sentence'\]"):
        read_labelled(path)


def test_non_integer_label_names_its_line(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("sentence\tlabel\nok\t1\n\nbad one\tpositive\n", encoding="utf-8")
    with pytest.raises(TSVError, match=r"c\.tsv, line 4: label 'positive' .* not an integer"):
        read_labelled(path)


def test_bad_utf8_and_short_rows_name_their_line(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_bytes(b"sentence\tlabel\nok\t1\n\xff\xfe oops\t0\n")
    with pytest.raises(TSVError, match=r"d\.tsv, line 3: invalid UTF-8 \(byte 0xff at column 1\)"):
        read_labelled(path)
    path.write_text("sentence\tlabel\nok\t1\nno tab here\n", encoding="utf-8")
    with pytest.raises(TSVError, match=r"d\.tsv, line 3: 1 field"):
        read_labelled(path)
    with pytest.raises(DataError, match=r"nothing\.tsv: file not found"):
        read_labelled(tmp_path / "nothing.tsv")


def test_a_header_without_rows_is_an_error_naming_the_file(tmp_path):
    """Issue 15: a header-only TSV once trained and reported "best dev accuracy 53.33%"."""
    path = tmp_path / "e.tsv"
    path.write_text("sentence\tlabel\n\n", encoding="utf-8")
    with pytest.raises(
        TSVError, match=r"e\.tsv: no rows of data \(2 line\(s\) read: the header and 1 blank\)"
    ):
        read_tsv(path, ["sentence", "label"])


def test_sst2_counts_match_its_source_notes(shared_data):
    dev = load_sst2(shared_data, "dev")
    assert len(dev) == 872 and sum(e.label == 0 for e in dev) == 428
    assert dev[0].text == "it 's a charming and often affecting journey ."
    with pytest.raises(ValueError, match="unlabelled"):
        load_sst2(shared_data, "test")


def test_split_words_keeps_whitespace_word_indices():
    tokens, word_ids = split_words("It's GREAT, really")
    assert tokens == ["it's", "great", ",", "really"]
    assert word_ids == [0, 1, 1, 2]


def test_word_vocab_orders_by_frequency_and_round_trips(tmp_path):
    vocab = WordVocab.build(["b a a", "c a b", "d"], min_freq=2)
    assert vocab.itos == ["<pad>", "<unk>", "<cls>", "a", "b"]
    ids, tokens, _ = vocab.encode("a zebra b", max_len=2)
    assert ids == [3, vocab.unk_id] and tokens == ["a", "zebra"]
    vocab.save(tmp_path)
    assert WordVocab.load(tmp_path).itos == vocab.itos
    with pytest.raises(FileNotFoundError, match="vocab.json"):
        WordVocab.load(tmp_path / "missing")
