"""Sentencepiece tokenisers: round trips, fixed special ids, quiet and training-split-only."""

from __future__ import annotations

import pytest

from attnkit.apps.translation.data.corpora import DataError, Pair, ParallelCorpus
from attnkit.apps.translation.data.generated import generate_corpus
from attnkit.apps.translation.data.tokenise import Tokenizer, train_tokenizer


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(1500, 100, 200, seed=2)


@pytest.mark.parametrize(
    ("model_type", "joint"), [("bpe", True), ("bpe", False), ("unigram", True)]
)
def test_round_trip_on_the_generated_corpus(corpus, tmp_path, model_type, joint):
    tok = train_tokenizer(corpus, tmp_path, vocab_size=500, model_type=model_type, joint=joint)
    src, tgt = [p.src for p in corpus.test], [p.tgt for p in corpus.test]
    src_ids, tgt_ids = tok.encode_src(src), tok.encode_tgt(tgt)
    assert tok.decode_src(src_ids) == src
    assert tok.decode_tgt(tgt_ids) == tgt
    assert all(1 not in ids for ids in src_ids + tgt_ids)  # nothing unknown
    assert max(map(max, tgt_ids)) < tok.tgt_vocab_size <= 500
    assert sum(map(len, tgt_ids)) > sum(len(t.split()) for t in tgt)  # real subwords
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == (["spm.model"] if joint else ["spm.src.model", "spm.tgt.model"])
    assert tok.joint == joint and (tok.src_vocab_size == tok.tgt_vocab_size or not joint)


def test_special_ids_are_fixed(corpus, tmp_path):
    tok = train_tokenizer(corpus, tmp_path, vocab_size=300)
    assert (tok.pad_id, tok.unk_id, tok.bos_id, tok.eos_id) == (0, 1, 2, 3)
    assert tok.tgt_pieces([0, 1, 2, 3]) == ["<pad>", "<unk>", "<s>", "</s>"]
    assert tok.src_pieces([2, 3]) == ["<s>", "</s>"]
    ids = tok.encode_tgt(["Der Hund schläft."])[0]
    assert 2 not in ids and 3 not in ids  # bos / eos are added by collate, not encode
    decoded = tok.decode_tgt([[2, *ids, 3, 0, 0], [2, *ids, 3, *ids]])
    assert decoded == ["Der Hund schläft.", "Der Hund schläft."]  # stops at eos, skips pad/bos


def test_save_load_and_quiet(corpus, tmp_path, capfd):
    tok = train_tokenizer(corpus, tmp_path / "a", vocab_size=300, joint=False)
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # minloglevel keeps sentencepiece silent
    tok.save(tmp_path / "run")
    again = Tokenizer.load(tmp_path / "run")
    texts = [p.tgt for p in corpus.valid]
    assert again.encode_tgt(texts) == tok.encode_tgt(texts)
    assert repr(again).startswith("Tokenizer(separate")


def test_trained_on_the_training_split_only(tmp_path):
    train = [Pair(f"the dog {i}", f"der Hund {i}") for i in range(50)]
    test = [Pair("the zebra", "das Zebra")]  # z, Z and e-b-r-a combos only in test
    corpus = ParallelCorpus("toy", {"train": train, "valid": train[:2], "test": test})
    tok = train_tokenizer(corpus, tmp_path, vocab_size=60)
    assert tok.unk_id in tok.encode_tgt(["das Zebra"])[0]


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="model_type is 'wordpiece'"):
        train_tokenizer(["a b"], tmp_path, model_type="wordpiece")
    with pytest.raises(ValueError, match="need \\(src, tgt\\) pairs"):
        train_tokenizer(["a b"], tmp_path, joint=False)
    with pytest.raises(ValueError, match="no training text"):
        train_tokenizer([], tmp_path)
    with pytest.raises(DataError, match=r"empty/spm\.model: file not found"):
        Tokenizer.load(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "spm.model").write_bytes(b"not a model")
    with pytest.raises(DataError, match=r"bad/spm\.model: not a sentencepiece model"):
        Tokenizer.load(tmp_path / "bad")


def test_plain_texts_train_a_joint_model(tmp_path):
    texts = ["ein kleiner Text", "a small text", "noch ein Text"] * 5
    tok = train_tokenizer(texts, tmp_path, vocab_size=40)
    assert tok.decode_src(tok.encode_src(texts[:3])) == texts[:3]
