"""Named corpora: data-directory resolution, Tatoeba's seeded split, the default corpus."""

from __future__ import annotations

import logging

import pytest

from attnkit.apps.translation.data.corpora import DataError, Pair, ParallelCorpus, write_corpus
from attnkit.apps.translation.data.named import (
    ENV_VAR,
    load_corpus,
    resolve_data_dir,
    split_tatoeba,
)


def test_data_dir_from_argument_then_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(DataError, match=f"set data.data_dir in the config .* or .* {ENV_VAR}") as e:
        resolve_data_dir()
    assert "--data-dir" not in str(e.value)  # `attnkit train` has no such option (issue 15)
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert resolve_data_dir() == tmp_path
    assert resolve_data_dir(tmp_path / "..") == tmp_path / ".."
    with pytest.raises(DataError, match=r"data directory not found \(from data.data_dir\)"):
        resolve_data_dir(tmp_path / "absent")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="file: not a directory"):
        resolve_data_dir(tmp_path / "file")


def test_unknown_name_and_bad_languages(tmp_path):
    with pytest.raises(DataError, match="unknown corpus 'wmt99'"):
        load_corpus("wmt99", tmp_path)
    with pytest.raises(DataError, match="languages 'de-xx' not available"):
        load_corpus("multi30k", tmp_path, langs="de-xx")
    with pytest.raises(DataError, match="multi30k/task1/raw/train.de.gz: file not found"):
        load_corpus("multi30k", tmp_path)
    with pytest.raises(DataError, match="deu-eng.zip: file not found"):
        load_corpus("tatoeba-eng-deu", tmp_path)


def test_directory_corpus_with_counted_drops(tmp_path, caplog):
    pairs = [Pair("a b c", "x y z"), Pair("", "leer"), Pair("w " * 20, "v")]
    corpus = ParallelCorpus("toy", {s: list(pairs) for s in ("train", "valid", "test")}, "en", "de")
    write_corpus(corpus, tmp_path / "toy")
    with caplog.at_level(logging.INFO):
        loaded = load_corpus(str(tmp_path / "toy"), langs="en-de", max_len=10)
    assert loaded.train == [Pair("a b c", "x y z")]
    assert len(loaded.test) == 2  # long pairs stay in held-out splits; empty ones do not
    assert loaded.dropped["train"].empty == 1 and loaded.dropped["train"].too_long == 1
    assert any("dropped 1 empty and 1 longer than 10" in r.getMessage() for r in caplog.records)


def test_split_tatoeba_keeps_source_groups_whole():
    pairs = [Pair(f"s{i // 3}", f"t{i}") for i in range(30)]  # 10 sources x 3 translations
    pairs += [Pair(f"u{i}", f"v{i}") for i in range(40)]  # 40 sources x 1
    splits = split_tatoeba(pairs, n_valid=7, n_test=8, seed=3)
    assert (len(splits["valid"]), len(splits["test"])) == (7, 8)
    assert sorted(sum(splits.values(), [])) == sorted(pairs)
    sources = {k: {p.src for p in v} for k, v in splits.items()}
    assert not sources["train"] & sources["test"] and not sources["train"] & sources["valid"]
    assert not sources["valid"] & sources["test"]
    assert split_tatoeba(pairs, n_valid=7, n_test=8, seed=3) == splits
    assert split_tatoeba(pairs, n_valid=7, n_test=8, seed=4) != splits
    with pytest.raises(DataError, match="cannot hold out"):
        split_tatoeba(pairs[:10], n_valid=5, n_test=5)


def test_multi30k_by_name(data_dir, monkeypatch):
    corpus = load_corpus("multi30k", data_dir)
    assert (corpus.src_lang, corpus.tgt_lang) == ("de", "en")
    assert [len(corpus[s]) for s in ("train", "valid", "test")] == [29000, 1014, 1000]
    monkeypatch.setenv(ENV_VAR, str(data_dir))
    fr_cs = load_corpus("multi30k:fr-cs")
    assert (fr_cs.src_lang, fr_cs.tgt_lang, len(fr_cs.test)) == ("fr", "cs", 1000)


def test_tatoeba_by_name(data_dir):
    corpus = load_corpus("tatoeba-eng-deu", data_dir)
    sizes = {k: len(v) for k, v in corpus.splits.items()}
    assert sizes["valid"] == 1000 and sizes["test"] == 1000
    assert sum(sizes.values()) == 169_813 - corpus.dropped["train"].empty
    assert not {p.src for p in corpus.train} & {p.src for p in corpus.test}
    everything = corpus.train + corpus.valid + corpus.test
    assert split_tatoeba(everything, seed=1)["test"] != corpus.test


def test_tatoeba_small_export_both_directions(tmp_path):
    folder = tmp_path / "tatoeba-eng-deu"
    folder.mkdir()
    lines = [f"Sentence {i}.\tSatz {i}.\tCC-BY 2.0 (France) #{i}" for i in range(10)]
    (folder / "deu.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    en_de = load_corpus("tatoeba-eng-deu", tmp_path, n_valid=2, n_test=3, seed=5)
    assert [len(en_de[s]) for s in ("train", "valid", "test")] == [5, 2, 3]
    de_en = load_corpus("tatoeba-eng-deu", tmp_path, langs="de-en", n_valid=2, n_test=3, seed=5)
    assert (de_en.src_lang, de_en.tgt_lang) == ("de", "en")
    assert de_en.test == [Pair(p.tgt, p.src) for p in en_de.test]


def test_default_corpus_needs_no_data_dir(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    corpus = load_corpus("default", n_valid=50, n_test=50)
    assert (corpus.src_lang, corpus.tgt_lang) == ("en", "de")
    assert len(corpus.train) == 20_000 and len(corpus.test) == 50
    monkeypatch.setattr("attnkit.apps.translation.data.generated.DEFAULT_TRAIN", 100)
    de_en = load_corpus("default:de-en", n_valid=5, n_test=5)
    assert de_en.src_lang == "de" and len(de_en.train) == 100
    assert de_en.train[0].tgt[0] in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def test_corpora_joined_by_plus_concatenate_training_and_keep_the_last_held_out(tmp_path):
    from attnkit.apps.translation.data.corpora import write_corpus
    from attnkit.apps.translation.data.generated import generate_corpus
    from attnkit.apps.translation.data.named import load_corpus

    a, b = generate_corpus(30, 5, 6, seed=1), generate_corpus(20, 4, 3, seed=2)
    write_corpus(a, tmp_path / "a")
    write_corpus(b, tmp_path / "b")
    joined = load_corpus(f"{tmp_path / 'a'}+{tmp_path / 'b'}", langs="en-de")
    assert joined.train == a.train + b.train
    assert joined.splits["valid"] == b.splits["valid"] and joined.splits["test"] == b.test
    swapped = load_corpus(f"{tmp_path / 'a'}+{tmp_path / 'b'}", langs="de-en")
    assert swapped.train[0] == (a.train[0].tgt, a.train[0].src)
