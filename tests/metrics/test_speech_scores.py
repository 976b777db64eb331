"""Speech scores on hand-computed examples: WER, CER and digit error rate (corpus-level, as
jiwer sums the edits), and the monotonicity of attention alignments."""

import math

import numpy as np
import pytest
import torch

from attnkit.metrics.speech import (
    cer,
    corpus_monotonicity,
    digit_error_rate,
    digit_tokens,
    monotonicity,
    wer,
    word_errors,
)


@pytest.mark.parametrize(
    "reference,hypothesis,expected",
    [
        ("the cat sat", "the cat sat", 0.0),
        ("the cat sat", "the cat sit", 1 / 3),  # one substitution
        ("a b c d", "a c d", 1 / 4),  # one deletion
        ("a b", "a x b", 1 / 2),  # one insertion
        ("a b", "x y z", 3 / 2),  # two substitutions and an insertion: above 1
    ],
)
def test_wer_by_hand(reference, hypothesis, expected):
    assert math.isclose(wer([reference], [hypothesis]), expected)


def test_wer_sums_the_edits_over_the_corpus():
    references, hypotheses = ["a b c", "d e"], ["a x c", "d e f"]
    assert math.isclose(wer(references, hypotheses), 2 / 5)  # not (1/3 + 1/2) / 2
    counts = word_errors(references, hypotheses)
    assert (counts.substitutions, counts.deletions, counts.insertions) == (1, 0, 1)
    assert (counts.hits, counts.reference_tokens) == (4, 5) and math.isclose(counts.rate, 0.4)


@pytest.mark.parametrize(
    "reference,hypothesis,expected",
    [
        ("abc", "abd", 1 / 3),
        ("kitten", "sitting", 3 / 6),  # k->s, e->i, +g
        ("a b", "ab", 1 / 3),  # the space is a character
    ],
)
def test_cer_by_hand(reference, hypothesis, expected):
    assert math.isclose(cer([reference], [hypothesis]), expected)


def test_digit_error_rate_counts_each_digit():
    assert digit_tokens("773") == "7 7 3" and digit_tokens(" 7 7x ") == "7 7 x"
    assert digit_error_rate(["7 7 3", "12"], ["773", "1 3 2"]) == pytest.approx(1 / 5)
    assert digit_error_rate("73", "7x3") == pytest.approx(1 / 2)  # x: an inserted token
    assert digit_error_rate(["777"], ["7"]) == pytest.approx(2 / 3)  # a repeat lost twice


def test_mismatched_corpora_are_an_error():
    with pytest.raises(ValueError, match="2 references but 1 hypotheses"):
        wer(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="no utterances"):
        cer([], [])


def _alignment(peaks: list[int], frames: int = 6) -> np.ndarray:
    """A ``(T_out, T_in)`` matrix with most weight on ``peaks[i]`` and some elsewhere."""
    weights = np.full((len(peaks), frames), 0.1 / (frames - 1))
    weights[np.arange(len(peaks)), peaks] = 0.9
    return weights


def test_monotonicity_by_hand():
    assert monotonicity(np.eye(5)) == 1.0  # the diagonal
    assert monotonicity(_alignment([0, 0, 1, 1, 4])) == 1.0  # staying on a frame is fine
    assert monotonicity(_alignment([0, 1, 2, 1, 3])) == 0.75  # one jump back in four steps
    assert monotonicity(_alignment([5, 4, 3, 2, 1, 0])) == 0.0  # read backwards
    assert monotonicity(torch.tensor(_alignment([2, 0, 1]), requires_grad=True)) == 0.5
    assert math.isnan(monotonicity(_alignment([3])))  # no step to judge


def test_corpus_monotonicity_averages_utterances():
    matrices = [np.eye(4), _alignment([0, 1, 2, 1, 3]), _alignment([2])]
    assert corpus_monotonicity(matrices) == pytest.approx((1.0 + 0.75) / 2)
    assert math.isnan(corpus_monotonicity([_alignment([1])]))
    with pytest.raises(ValueError, match=r"\(T_out, T_in\)"):
        monotonicity(np.ones((2, 3, 4)))
