"""AER per sentence-length bin (attnkit.metrics.aer.aer_by_length): a hand-computed example in
which pooling the bin's links (Och & Ney 2003) differs from averaging its sentences' AERs."""

import pytest

from attnkit.interpret.alignments import Alignment
from attnkit.metrics.aer import LENGTH_BINS, aer_by_length

GOLD = [
    Alignment({(0, 0), (1, 1)}, {(2, 2)}),  # 5 words
    Alignment({(0, 0)}),  # 8 words
    Alignment({(0, 1), (1, 0)}),  # 15 words
    Alignment({(0, 0)}),  # 50 words
]
PRED = [{(0, 0), (2, 2), (3, 3)}, {(0, 0)}, {(0, 0)}, set()]
LENGTHS = [5, 8, 15, 50]


def test_each_bin_pools_the_links_of_its_sentences():
    bins = aer_by_length(GOLD, PRED, LENGTHS)
    assert [b.label for b in bins] == ["1-10", "11-20", "21-30", "31-40", "41+"]
    assert [b.sentences for b in bins] == [2, 1, 0, 0, 1]
    short = bins[0].scores
    # |A| = 3 + 1, |S| = 2 + 1, |A ∩ S| = 1 + 1, |A ∩ P| = 2 + 1: AER = 1 - 5/7 (the mean of
    # the two sentences' AERs, 0.4 and 0, would be 0.2)
    assert (short.predicted, short.sure, short.predicted_sure, short.predicted_possible) == (
        4,
        3,
        2,
        3,
    )
    assert short.aer == pytest.approx(2 / 7)
    assert short.precision == pytest.approx(3 / 4) and short.recall == pytest.approx(2 / 3)
    assert bins[1].scores.aer == 1.0  # a wrong link, both sure links missed
    assert bins[2].scores is None and bins[3].scores is None
    assert (bins[4].scores.aer, bins[4].scores.recall) == (1.0, 0.0)


def test_bins_of_ones_own_and_the_json_row():
    bins = aer_by_length(GOLD, PRED, LENGTHS, bins=((1, 8), (9, None)))
    assert [(b.label, b.sentences) for b in bins] == [("1-8", 2), ("9+", 2)]
    assert bins[1].scores.aer == pytest.approx(1.0)  # 0 of 1 + 3 links agree
    row = bins[0].percent()
    assert row["bin"] == "1-8" and row["sentences"] == 2
    assert row["aer"] == pytest.approx(100 * 2 / 7)
    empty = aer_by_length(GOLD, PRED, LENGTHS, bins=((21, 30),))[0].percent()
    assert empty == dict(bin="21-30", sentences=0, aer=None, precision=None, recall=None)


def test_a_sentence_in_no_bin_is_left_out_and_counts_must_agree():
    bins = aer_by_length(GOLD, PRED, [0, 8, 15, 50])  # length 0: in no default bin
    assert bins[0].sentences == 1 and bins[0].scores.aer == 0.0
    assert LENGTH_BINS[0] == (1, 10)
    with pytest.raises(ValueError, match="4 gold sentences, 4 predicted and 3 lengths"):
        aer_by_length(GOLD, PRED, LENGTHS[:3])
