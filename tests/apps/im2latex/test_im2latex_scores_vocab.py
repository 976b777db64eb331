"""The measures (sacreBLEU on tokens, exact match) and the vocabulary round trip."""

from __future__ import annotations

import pytest
from sacrebleu.metrics import BLEU

from attnkit.apps.im2latex.scores import exact_match, token_bleu
from attnkit.apps.im2latex.vocab import BOS, EOS, UNK, Vocabulary


def test_bleu_is_sacrebleu_on_space_joined_tokens_without_retokenising():
    pred = [["\\frac", "{", "a", "}", "{", "b", "}"], ["x", "^", "{", "2", "}"]]
    truth = [["\\frac", "{", "a", "}", "{", "c", "}"], ["x", "^", "{", "2", "}"]]
    expected = (
        BLEU(tokenize="none")
        .corpus_score(["\\frac { a } { b }", "x ^ { 2 }"], [["\\frac { a } { c }", "x ^ { 2 }"]])
        .score
    )
    assert token_bleu(pred, truth) == pytest.approx(expected)
    assert token_bleu(truth, truth) == pytest.approx(100.0)
    assert 0 < token_bleu(pred, truth) < 100


def test_exact_match_counts_identical_sequences():
    assert exact_match([["a"], ["b", "c"]], [["a"], ["b"]]) == 0.5
    with pytest.raises(ValueError):
        token_bleu([["a"]], [])


@pytest.mark.parametrize(
    ("prediction", "truth"),
    [
        (["a", "+", "b"], ["a", "+", "c"]),  # only the last token differs
        (["\\frac", "{", "a", "}", "{", "b", "}"], ["\\frac", "{", "a", "}", "{", "b", "]"]),
        (["x", "^", "{", "2", "}"], ["x", "^", "{", "3", "}"]),  # the last but one
        (["y", "^", "{", "2", "}"], ["x", "^", "{", "2", "}"]),  # the first
        (["a"], ["b"]),  # a single token, which is also the last
        (["a", "b"], ["a", "b", "c"]),  # the truth one token longer
        (["a", "b", "c"], ["a", "b"]),  # the prediction one token longer
        ([], ["a"]),
    ],
)
def test_exact_match_needs_every_token_and_the_same_length(prediction, truth):
    assert exact_match([prediction], [truth]) == 0.0
    assert exact_match([truth, prediction], [truth, truth]) == 0.5
    assert exact_match([truth], [truth]) == 1.0


def test_vocabulary_orders_by_frequency_and_round_trips():
    vocab = Vocabulary.build([["x", "^", "{", "2", "}"], ["x", "+", "y"]])
    assert vocab.tokens[4] == "x"  # the most frequent first
    ids = vocab.encode(["x", "+", "\\alpha"])
    assert ids[0] == BOS and ids[-1] == EOS and ids[3] == UNK
    assert vocab.decode(ids[1:]) == ["x", "+", "<unk>"]


def test_vocabulary_saves_and_loads(tmp_path):
    vocab = Vocabulary.build([["a", "b"]])
    vocab.save(tmp_path / "vocab.json")
    assert Vocabulary.load(tmp_path / "vocab.json").tokens == vocab.tokens
    with pytest.raises(FileNotFoundError, match="missing vocabulary"):
        Vocabulary.load(tmp_path / "nothing.json")
