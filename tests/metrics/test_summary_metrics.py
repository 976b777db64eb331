"""ROUGE against rouge_score called directly, SciTLDR's multi-reference rule, and the
repetition and copying shares against hand-counted examples."""

from __future__ import annotations

import pytest
from rouge_score.rouge_scorer import RougeScorer

from attnkit.metrics.summary import (
    copied_share,
    corpus_rouge,
    novel_ngram_share,
    repeated_ngram_share,
    repeated_trigram_share,
    rouge,
)

DIRECT = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def direct(prediction: str, reference: str) -> dict[str, float]:
    scores = DIRECT.score(reference, prediction)
    return {key: 100 * score.fmeasure for key, score in scores.items()}


PAIRS = [
    ("the cat sat on the mat", "the cat was sitting on the mat"),
    ("We propose a new attention model.", "A novel attention mechanism is proposed"),
    ("training networks", "trained network"),  # the stemmer makes these match
    ("", "something"),
]


@pytest.mark.parametrize("prediction, reference", PAIRS)
def test_one_reference_equals_rouge_score_in_points(prediction, reference):
    assert rouge(prediction, [reference]) == pytest.approx(direct(prediction, reference))
    assert rouge(prediction, reference) == pytest.approx(direct(prediction, reference))


def test_a_hand_computed_value():
    # unigrams: 5 of 6 predicted match 5 of 7 reference words: F1 = 2 * 5 / (6 + 7) = 10/13
    # bigrams "the cat", "on the", "the mat": 3 of 5 and 3 of 6: F1 = 2 * 3 / 11
    found = rouge("the cat sat on the mat", ["the cat was sitting on the mat"])
    assert found["rouge1"] == pytest.approx(100 * 10 / 13)
    assert found["rouge2"] == pytest.approx(100 * 6 / 11)
    assert rouge("training networks", ["trained network"])["rouge1"] == pytest.approx(100.0)


# Reference B has the higher ROUGE-1, reference A the higher ROUGE-2 and ROUGE-L.
PREDICTION = "a b c d"
A = "a b x x x x"  # unigrams a b (2 of 4, 2 of 6): R1 40; bigram "a b" (1 of 3, 1 of 5): R2 25
B = "d c b a"  # unigrams 4 of 4: R1 100; no bigram in common: R2 0


def test_several_references_take_the_one_with_the_best_rouge1_as_scitldr_does():
    # allenai/scitldr scripts/cal-rouge.py keeps the reference with the highest ROUGE-1 and
    # reports its ROUGE-2 and ROUGE-L with it, not the maximum of each metric apart
    a, b = direct(PREDICTION, A), direct(PREDICTION, B)
    assert (a["rouge1"], a["rouge2"], b["rouge1"], b["rouge2"]) == pytest.approx((40, 25, 100, 0))
    assert a["rougeL"] > b["rougeL"]  # LCS "a b" against one word
    assert rouge(PREDICTION, [A, B]) == pytest.approx(b)
    assert rouge(PREDICTION, [B, A]) == pytest.approx(b)
    assert rouge(PREDICTION, [A, B])["rouge2"] == 0.0  # a per-metric maximum would give 25
    assert rouge(PREDICTION, [A, B], rule="first") == pytest.approx(a)
    mean = {key: (a[key] + b[key]) / 2 for key in a}
    assert rouge(PREDICTION, [A, B], rule="mean") == pytest.approx(mean)


def test_a_tie_on_rouge1_keeps_the_earlier_reference():
    # both references share 2 of 4 unigrams (same R1); only "a b x x" shares a bigram
    first, second = "a b x x", "b y a y"
    assert direct(PREDICTION, first)["rouge1"] == pytest.approx(
        direct(PREDICTION, second)["rouge1"]
    )
    assert rouge(PREDICTION, [first, second])["rouge2"] > 0
    assert rouge(PREDICTION, [second, first])["rouge2"] == 0.0


def test_corpus_rouge_is_the_mean_over_papers_and_checks_its_input():
    refs = [[A, B], ["a b c d"]]
    found = corpus_rouge([PREDICTION, PREDICTION], refs)
    best = rouge(PREDICTION, [A, B])
    assert found == pytest.approx({key: (best[key] + 100.0) / 2 for key in best})
    with pytest.raises(ValueError, match="one reference list per prediction"):
        corpus_rouge([PREDICTION], refs)
    with pytest.raises(ValueError, match="no reference"):
        rouge(PREDICTION, [])
    with pytest.raises(ValueError, match="rule must be one of"):
        rouge(PREDICTION, [A], rule="max")


def test_repeated_trigrams_are_counted_against_earlier_ones():
    # trigrams: abc bca cab abc: the fourth repeats the first
    assert repeated_trigram_share("a b c a b c".split()) == pytest.approx(1 / 4)
    # x x x x x: three trigrams "x x x", the second and third repeat
    assert repeated_trigram_share(["x"] * 5) == pytest.approx(2 / 3)
    assert repeated_trigram_share("a b c d e".split()) == 0.0
    assert repeated_trigram_share(["a", "a"]) == 0.0 and repeated_trigram_share([]) == 0.0
    assert repeated_ngram_share("a b a b".split(), 2) == pytest.approx(1 / 3)  # ab ba ab


def test_copied_and_novel_shares():
    source = "we train a big model on text".split()
    summary = "we train a huge model fast".split()  # huge, fast are new: 4 of 6 copied
    assert copied_share(summary, source) == pytest.approx(4 / 6)
    assert copied_share(["model", "model"], source) == 1.0
    assert copied_share([], source) == 0.0
    # bigrams: "we train", "train a" in the source; "a huge", "huge model", "model fast" not
    assert novel_ngram_share(summary, source, 2) == pytest.approx(3 / 5)
    assert novel_ngram_share(summary, source, 1) == pytest.approx(1 - 4 / 6)
    assert novel_ngram_share(["we"], source, 2) == 0.0
