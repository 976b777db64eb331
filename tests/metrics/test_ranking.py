"""HR@k, NDCG@k, MRR and the target's rank against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.metrics.ranking import (
    hit_rate_at_k,
    mrr,
    ndcg_at_k,
    rank_of_target,
    ranking_scores,
)

# Five users' targets at 0-based ranks 0, 3, 9, 10 and 50, cut at k = 10.
RANKS = [0, 3, 9, 10, 50]
# HR@10: ranks 0, 3 and 9 are inside the top 10, 10 and 50 are not: 3 / 5.
HR10 = 0.6
# NDCG@10: (1/log2(2) + 1/log2(5) + 1/log2(11)) / 5 = (1 + 0.4306765581 + 0.2890648263) / 5.
NDCG10 = 0.3439482769
# MRR: (1/1 + 1/4 + 1/10 + 1/11 + 1/51) / 5 = (1 + 0.25 + 0.1 + 0.0909090909 + 0.0196078431) / 5.
MRR = 0.2921033868


def test_hit_rate_ndcg_and_mrr_match_the_hand_computed_values():
    assert hit_rate_at_k(RANKS, 10) == pytest.approx(HR10)
    assert ndcg_at_k(RANKS, 10) == pytest.approx(NDCG10, abs=1e-9)
    assert mrr(RANKS) == pytest.approx(MRR, abs=1e-9)
    scores = ranking_scores(np.array(RANKS), k=10)
    assert (scores.hit_rate, scores.users, scores.k) == (pytest.approx(HR10), 5, 10)
    assert scores.ndcg == pytest.approx(NDCG10, abs=1e-9)
    assert scores.mrr == pytest.approx(MRR, abs=1e-9)


def test_the_cut_is_strict_and_a_top_target_scores_one():
    # rank k - 1 is inside the top k, rank k is not; rank 0 has gain 1 and reciprocal rank 1
    assert hit_rate_at_k([4], 5) == 1.0 and hit_rate_at_k([5], 5) == 0.0
    assert ndcg_at_k([4], 5) == pytest.approx(1 / np.log2(6)) and ndcg_at_k([5], 5) == 0.0
    assert ndcg_at_k([0], 1) == 1.0 and mrr([0]) == 1.0
    # MRR cut at k = 4: 1/1 + 0 + 0, over three users
    assert mrr([0, 4, 7], k=4) == pytest.approx(1 / 3)


def test_rank_counts_only_the_candidates_scored_strictly_higher():
    scores = [0.5, 0.9, 0.5, 0.1, 0.7]
    # target 0 (0.5): 0.9 and 0.7 are higher, the other 0.5 is a tie and does not count
    assert rank_of_target(scores, 0) == 2
    assert rank_of_target(scores, 0, ties="pessimistic") == 3
    assert rank_of_target(scores, 3) == 4  # the lowest of five
    assert rank_of_target(scores, 1) == 0  # the highest
    # a model that scores everything alike: first under the optimistic rule, last otherwise
    assert rank_of_target(np.zeros(101), 0) == 0
    assert rank_of_target(np.zeros(101), 0, ties="pessimistic") == 100


def test_a_batch_of_scores_gives_one_rank_per_row_for_numpy_and_torch():
    scores = np.array([[0.2, 0.3, 0.1], [0.9, 0.3, 0.1], [0.1, 0.3, 0.1]])  # (B, N) = (3, 3)
    assert rank_of_target(scores, 0).tolist() == [1, 0, 1]
    assert rank_of_target(scores, [2, 1, 2]).tolist() == [2, 1, 1]
    assert rank_of_target(torch.tensor(scores, requires_grad=True), 0).tolist() == [1, 0, 1]
    assert ranking_scores(torch.tensor([0, 1, 20])).hit_rate == pytest.approx(2 / 3)


def test_without_ties_the_rank_equals_the_authors_double_argsort():
    # kang205/SASRec util.evaluate: the target first, rank = (-scores).argsort().argsort()[0]
    rng = np.random.default_rng(0)
    for _ in range(50):
        scores = rng.normal(size=101)
        assert rank_of_target(scores, 0) == (-scores).argsort().argsort()[0]


def test_bad_ranks_scores_and_cuts_are_refused():
    with pytest.raises(ValueError, match="no ranks"):
        hit_rate_at_k([], 10)
    with pytest.raises(ValueError, match="negative"):
        ndcg_at_k([0, -1], 10)
    with pytest.raises(ValueError, match="whole numbers"):
        mrr([0.5])
    with pytest.raises(ValueError, match="k must be"):
        hit_rate_at_k([0], 0)
    with pytest.raises(ValueError, match="NaN"):
        rank_of_target([0.1, float("nan")], 0)
    with pytest.raises(ValueError, match="target_index"):
        rank_of_target([0.1, 0.2], 2)
    with pytest.raises(ValueError, match="ties"):
        rank_of_target([0.1, 0.2], 0, ties="random")
