"""Interaction files, the authors' leave-last-two-out split and the sampled candidates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnkit.apps.recommendation.data import (
    candidates,
    evaluation_users,
    exclusions,
    games_path,
    read_interactions,
    sample_negatives,
    split_last_two,
)
from attnkit.errors import DataError
from attnkit.metrics.ranking import rank_of_target

# Users' lines interleaved, as a log would be; no timestamps, so file order is time order.
LOG = """1 10
2 20
1 11
3 30
4 40
1 12
3 31
4 41
1 13
4 42
"""


def _write(tmp_path: Path, text: str, name: str = "log.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _split(tmp_path: Path, text: str = LOG):
    return split_last_two(read_interactions(_write(tmp_path, text)))


def test_the_split_is_the_authors_data_partition(tmp_path):
    # kang205/SASRec util.data_partition: >= 3 items: last = test, second to last = valid,
    # the rest train; fewer than 3 (users 2 and 3): all in training, never evaluated.
    split = _split(tmp_path)
    assert split.train == {1: [10, 11], 2: [20], 3: [30, 31], 4: [40]}
    assert split.valid == {1: 12, 4: 41}
    assert split.test == {1: 13, 4: 42}
    assert split.training_only == [2, 3] and split.evaluated() == [1, 4]
    assert (split.n_users, split.n_items) == (4, 42)
    assert split.history(1, "test") == [10, 11, 12] and split.history(1, "valid") == [10, 11]


def test_a_user_with_one_item_trains_only_and_is_never_evaluated(tmp_path):
    split = _split(tmp_path, "1 5\n2 6\n2 7\n2 8\n")
    assert split.train[1] == [5] and 1 in split.training_only
    assert 1 not in split.valid and 1 not in split.test
    assert evaluation_users(split) == [2]
    with pytest.raises(KeyError, match="not evaluated"):
        candidates(split, 1)


def test_timestamps_order_each_user_and_equal_times_keep_file_order(tmp_path):
    text = "user,item,timestamp\n1,5,300\n1,7,100\n2,9,5\n1,6,100\n1,8,200.5\n"
    found = read_interactions(_write(tmp_path, text, "log.csv"))
    assert found.sequences == {1: [7, 6, 8, 5], 2: [9]}  # 7 and 6 at 100: file order
    assert (found.lines, found.n_users, found.n_items) == (5, 2, 9)
    tabs = read_interactions(_write(tmp_path, "user\titem\n\n2\t3\n1\t4\n2\t1\n", "log.tsv"))
    assert tabs.sequences == {1: [4], 2: [3, 1]} and tabs.lines == 3


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("1 2\n1 x\n", 2, "item id 'x'"),
        ("1 2\n1.5 3\n", 2, "user id '1.5'"),
        ("1 2\n0 3\n", 2, "user id '0'"),
        ("1 2\n1 3\n\n1 4 5\n", 4, "3 columns, expected as line 1"),
        ("1 2 3 4\n", 1, "4 columns, expected 2 or 3"),
        ("1\n", 1, "1 columns"),
        ("user item t\n1 2 3\n1 3 soon\n", 3, "timestamp 'soon'"),
    ],
)
def test_bad_lines_name_the_file_and_the_line(tmp_path, text, line, words):
    path = _write(tmp_path, text)
    with pytest.raises(DataError) as caught:
        read_interactions(path)
    assert str(caught.value).startswith(f"{path}, line {line}: ")
    assert words in str(caught.value)


@pytest.mark.parametrize(
    ("text", "words"),
    [("", "an empty file"), ("\n \n", "an empty file"), ("user,item\n", "only a header")],
)
def test_a_file_without_interactions_is_refused_by_name(tmp_path, text, words):
    path = _write(tmp_path, text)
    with pytest.raises(DataError, match=words) as caught:
        read_interactions(path)
    assert str(caught.value).startswith(f"{path}: ")


def _catalogue(tmp_path: Path):
    """Users 1-30 with 3-12 items each from a catalogue of 300."""
    rng = np.random.default_rng(7)
    lines = [
        f"{user} {item}"
        for user in range(1, 31)
        for item in rng.choice(np.arange(1, 301), size=rng.integers(3, 13), replace=False)
    ]
    return _split(tmp_path, "\n".join([*lines, "31 300"]) + "\n")


def test_negatives_are_never_the_users_items_nor_repeat(tmp_path):
    split = _catalogue(tmp_path)
    for user in split.evaluated():
        seen = set(split.history(user)) | {split.test[user]}
        for seed in (0, 1, 2):
            negatives = sample_negatives(split, user, seed)
            assert negatives.shape == (100,) and len(set(negatives.tolist())) == 100
            assert not seen & set(negatives.tolist())
            assert negatives.min() >= 1 and negatives.max() <= split.n_items
        found = candidates(split, user, "valid", seed=3)
        assert found[0] == split.valid[user] and found.shape == (101,)


def test_negatives_are_a_pure_function_of_seed_and_user(tmp_path):
    split = _catalogue(tmp_path)
    users = split.evaluated()
    forward = {u: sample_negatives(split, u, 5) for u in users}
    backward = {u: sample_negatives(split, u, 5) for u in reversed(users)}
    assert all(np.array_equal(forward[u], backward[u]) for u in users)
    other = sample_negatives(split, users[0], 6)
    assert not np.array_equal(forward[users[0]], other)
    assert not np.array_equal(forward[users[0]], forward[users[1]])


def test_the_authors_rule_excludes_only_training_items_with_replacement(tmp_path):
    # train [1], valid 2, test 3 in a catalogue of 5: the authors may draw 2 and 3 as negatives
    split = _split(tmp_path, "1 1\n1 2\n1 3\n2 5\n")
    negatives = sample_negatives(split, 1, seed=0, rule="authors").tolist()
    assert 1 not in negatives and set(negatives) == {2, 3, 4, 5}
    with pytest.raises(ValueError, match="2 items left to sample 100"):
        sample_negatives(split, 1, seed=0)


def test_sampled_ranking_of_a_hand_made_user(tmp_path):
    # items 1-8; user 1 saw 1, 2, 3 (test target 3): 5 negatives can only be 4, 5, 6, 7, 8
    split = _split(tmp_path, "1 1\n1 2\n1 3\n2 8\n")
    found = candidates(split, 1, n=5)
    assert found[0] == 3 and sorted(found[1:].tolist()) == [4, 5, 6, 7, 8]
    assert rank_of_target(-found.astype(float), 0) == 0  # a model preferring low ids
    assert rank_of_target(found.astype(float), 0) == 5  # one preferring high ids


def test_full_ranking_leaves_out_the_history_before_the_target(tmp_path):
    split = _split(tmp_path, "1 4\n1 2\n1 4\n1 9\n")  # item 4 again as the validation target
    assert exclusions(split, 1, "test") == [2, 4]
    assert exclusions(split, 1, "valid") == [2]  # the repeated target stays rankable


def test_the_evaluated_users_are_sampled_reproducibly(tmp_path):
    split = _catalogue(tmp_path)
    everyone = split.evaluated()
    assert evaluation_users(split, None) == everyone and 31 not in everyone
    chosen = evaluation_users(split, 10, seed=1)
    assert len(chosen) == 10 and chosen == sorted(chosen) and set(chosen) <= set(everyone)
    assert chosen == evaluation_users(split, 10, seed=1)
    assert chosen != evaluation_users(split, 10, seed=2)


GAMES = games_path()


@pytest.mark.skipif(not GAMES.is_file(), reason=f"SASRec's Video.txt not found at {GAMES}")
def test_the_games_file_has_the_published_counts():
    found = read_interactions(GAMES)
    assert (found.n_users, found.n_items, found.lines) == (31_013, 23_715, 287_107)
    assert len(found.sequences) == 31_013 and found.sequences[1][:2] == [6393, 13504]
    split = split_last_two(found)
    assert (len(split.evaluated()), len(split.training_only)) == (30_901, 112)
