"""Training pairs joined into 2-4-sentence examples (data.concat): parallel, every pair used once,
sizes as asked, a pure function of the seed, and only the training split joined."""

from __future__ import annotations

import pytest

from attnkit.apps.translation.config import DataConfig
from attnkit.apps.translation.data.concat import concatenate_pairs
from attnkit.apps.translation.data.corpora import Pair
from attnkit.apps.translation.prepare import cleaned_corpus, prepare

PAIRS = [Pair(f"q{i} ist hier .", f"r{i} is here .") for i in range(103)]


def _numbers(text: str, mark: str) -> list[int]:
    return [int(word[1:]) for word in text.split() if word.startswith(mark)]


def test_examples_stay_parallel_and_use_every_pair_once():
    joined = concatenate_pairs(PAIRS, (2, 4), seed=3)
    used = []
    for n, example in enumerate(joined):
        src, tgt = _numbers(example.src, "q"), _numbers(example.tgt, "r")
        assert src == tgt  # sentence k of the source is translated by sentence k of the target
        assert example.src == " ".join(PAIRS[i].src for i in src)  # joined by single spaces
        assert example.tgt == " ".join(PAIRS[i].tgt for i in tgt)
        assert 2 <= len(src) <= 4 or (n == len(joined) - 1 and len(src) < 2)
        used += src
    assert sorted(used) == list(range(len(PAIRS)))
    assert used != sorted(used)  # the order is shuffled
    assert {len(_numbers(e.src, "q")) for e in joined[:-1]} == {2, 3, 4}


def test_the_same_seed_gives_the_same_examples_and_another_seed_others():
    assert concatenate_pairs(PAIRS, (2, 4), seed=3) == concatenate_pairs(PAIRS, (2, 4), seed=3)
    assert concatenate_pairs(PAIRS, (2, 4), seed=3) != concatenate_pairs(PAIRS, (2, 4), seed=4)
    fixed = concatenate_pairs(PAIRS, (3, 3), seed=0)
    assert len(fixed) == 35 and all(len(_numbers(e.src, "q")) == 3 for e in fixed[:-1])
    assert sorted(concatenate_pairs(PAIRS, (1, 1), seed=0)) == sorted(PAIRS)
    assert concatenate_pairs([], (2, 4)) == []
    with pytest.raises(ValueError, match="1 <= low <= high"):
        concatenate_pairs(PAIRS, (3, 2))


def _files(tmp_path, split: str, n: int) -> str:
    prefix = tmp_path / split
    words = [f"{split} satz nummer {i} ." for i in range(n)]
    (tmp_path / f"{split}.de").write_text("\n".join(words) + "\n")
    (tmp_path / f"{split}.en").write_text("\n".join(w.replace("satz", "line") for w in words))
    return str(prefix)


def test_only_the_training_split_is_joined_and_training_reads_those_pairs(tmp_path):
    train, valid = _files(tmp_path, "train", 40), _files(tmp_path, "valid", 7)
    kw = dict(corpus="files", src_lang="de", tgt_lang="en", train=train, valid=valid)
    plain = cleaned_corpus(DataConfig(**kw))
    joined = cleaned_corpus(DataConfig(**kw, concat=(2, 4), concat_seed=5))
    assert joined.valid == plain.valid and len(plain.train) == 40
    assert joined.train == concatenate_pairs(plain.train, (2, 4), seed=5)
    cfg = DataConfig(**kw, concat=(2, 4), concat_seed=5, vocab_size=60, max_len=200)
    prepared = prepare(cfg, tmp_path / "run")
    assert prepared.corpus.train == joined.train  # the pairs guided alignment lines index
    assert sorted(e.index for e in prepared.train) == list(range(len(joined.train)))
    assert len(prepared.valid) == 7
