"""The speech config is checked at load: a model whose frame width differs from the data's, bad
lengths, an unknown key and an empty file are each one error naming the file (and line, field);
the shipped configs load; data.py's splits and vocabulary are what config.py documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnkit.apps.speech.config import load_config
from attnkit.apps.speech.data import SPLITS, Vocabulary, load_split
from attnkit.config import ConfigError

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ["fsdd-las", "fsdd-las-content", "an4-las", "an4-ctc", "an4-joint"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_load(name):
    cfg = load_config(ROOT / "configs" / f"{name}.yaml")
    assert cfg.model.n_features == cfg.data.n_features


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("task: speech\ndata: {source: an4}\n", "model.n_features is 40 but an4 gives 13"),
        ("task: speech\ndata:\n  train_lengths: [3, 1]\n", "line 3: data.train_lengths"),
        ("task: speech\ndata:\n  colour: red\n", "colour"),
        ("", "empty"),
        ("task: speech\ntrain: {ctc_rescore: 0.3}\n", "train.ctc_rescore 0.3 rescores with both"),
        ("task: speech\ntrain: {ctc_rescore: 1.5}\n", "ctc_rescore"),
    ],
)
def test_bad_configs_name_the_file(tmp_path, text, words):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in str(err.value) and words in str(err.value)


def test_an4_valid_is_the_last_of_train(tmp_path):
    path = tmp_path / "an4.yaml"
    path.write_text("task: speech\ndata: {source: an4}\nmodel: {n_features: 13}\n")
    data = load_config(path).data
    train, valid = load_split(data, "train"), load_split(data, "valid")
    assert (len(train), len(valid)) == (900, 48) and not set(train.names) & set(valid.names)
    assert SPLITS["an4"] == ("train", "valid", "test")
    vocab = Vocabulary.build(data, train.texts)
    text = valid.texts[0]
    assert vocab.join(vocab.decode(vocab.encode(text)[1:-1])) == text
