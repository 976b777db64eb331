"""BLEU and chrF against sacreBLEU's own command-line results and hand-computed values."""

import math

import pytest

from attnkit.metrics import bleu_by_length, score_corpus


def test_perfect_and_disjoint():
    refs = ["the cat sat on the mat .", "a dog runs in the park ."]
    assert score_corpus(refs, refs).bleu == pytest.approx(100.0)
    assert score_corpus(refs, refs).chrf == pytest.approx(100.0)
    assert score_corpus(["x y z", "q r s"], refs).bleu == pytest.approx(0.0, abs=1e-9)


def test_bleu_by_hand():
    # one sentence, hypothesis of 6 tokens against 7: p1 = 5/6 (one wrong token), p2 = 3/5,
    # p3 = 2/4, p4 = 1/3; brevity penalty exp(1 - 7/6).
    hyp, ref = "the cat sat on a mat", "the cat sat on the mat ."
    p = [5 / 6, 3 / 5, 2 / 4, 1 / 3]
    expected = 100 * math.exp(1 - 7 / 6) * math.exp(sum(math.log(x) for x in p) / 4)
    scores = score_corpus([hyp], [ref])
    assert scores.bleu == pytest.approx(expected, rel=1e-9)
    assert scores.bleu_signature.startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert "nc:6" in scores.chrf_signature and "nw:0" in scores.chrf_signature


def test_by_length_buckets():
    src = ["a b", "a b c d e f g h i j k l", "a " * 45]
    refs = ["one two three four", "one two three four", "x y z w"]
    hyps = ["one two three four", "nothing like it", "x y z w"]
    rows = bleu_by_length(src, hyps, refs, edges=(10, 20, 40))
    assert [r["bucket"] for r in rows] == ["1-10", "11-20", ">40"]
    assert [r["n"] for r in rows] == [1, 1, 1]
    assert rows[0]["bleu"] == pytest.approx(100.0) and rows[1]["bleu"] == pytest.approx(0.0)


def test_mismatched_lengths_are_an_error():
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        score_corpus(["a", "b"], ["a"])
