"""The recommendation task: training examples as the authors' sampler makes them, ranks by
both protocols on a model with made-up scores, epochs that are pure functions of (seed,
epoch), and a tiny SASRec that learns a cyclic next-item rule from a file."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.apps.recommendation.batches import left_pad, ranks, training_example
from attnkit.apps.recommendation.config import load_config
from attnkit.apps.recommendation.training import RecommendationTask, sampled_scores
from attnkit.engine.trainer import fit
from attnkit.errors import DataError


def test_a_training_example_shifts_by_one_and_draws_unseen_negatives():
    items = [5, 3, 9, 3, 7]
    seq, pos, neg = training_example(items, n_items=12, max_len=6, rng=np.random.default_rng(0))
    assert seq == [0, 0, 5, 3, 9, 3] and pos == [0, 0, 3, 9, 3, 7]
    assert [n == 0 for n in neg] == [p == 0 for p in pos]  # a negative where there is a target
    assert all(n not in items for n in neg if n)
    assert left_pad([1, 2, 3, 4], 2) == [3, 4]  # the most recent max_len
    with pytest.raises(ValueError, match="every one"):
        training_example([1, 2], n_items=2, max_len=3, rng=np.random.default_rng(0))


class _Fixed(torch.nn.Module):
    """Scores item j as ``table[j]`` whatever the history."""

    def __init__(self, table):
        super().__init__()
        self.table = torch.nn.Parameter(torch.tensor(table, dtype=torch.float32))

    def predict(self, seq, items=None):
        scores = self.table.expand(seq.size(0), -1)  # (B, V + 1)
        return scores if items is None else scores.gather(1, items)


def test_ranks_by_sampled_candidates_and_by_full_ranking():
    model = _Fixed([0.0, 0.9, 0.1, 0.5, 0.7, 0.3])  # items 1..5; column 0 is padding
    # sampled: target first among its candidates
    found = ranks(model, [[1], [2]], [[3, 2, 5], [2, 1, 4]], [3, 2], max_len=3)
    assert found.tolist() == [0, 2]
    # full: item 3 is beaten by 1 and 4, but 1 is in the history and left out
    found = ranks(model, [[1], [4]], None, [3, 3], max_len=3, exclude=[[1], [4]])
    assert found.tolist() == [1, 1]
    assert ranks(model, [[1]], None, [1], max_len=3, exclude=[[1]]).tolist() == [0]  # a repeat


def _file(tmp_path, users=120):
    rng = np.random.default_rng(0)
    lines = []
    for user in range(1, users + 1):
        start, n = int(rng.integers(1, 25)), int(rng.integers(5, 12))
        lines += [f"{user}\t{(start + k - 1) % 24 + 1}" for k in range(n)]
    path = tmp_path / "cycle.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _config(tmp_path, path, *extra):
    text = f"""name: tiny
task: recommendation
data: {{path: {path}, negatives: 12, rule: unseen, valid_users: null, eval_users: null}}
model: {{max_len: 8, d_model: 16, n_blocks: 1, heads: 1, dropout: 0.0}}
train: {{epochs: 6, batch_size: 16, learning_rate: 0.01, threads: 1, precision: fp32,
        tensorboard: false, patience: 100}}
"""
    config = tmp_path / "tiny.yaml"
    config.write_text(text, encoding="utf-8")
    return load_config(config, list(extra))


def test_epochs_are_pure_functions_of_seed_and_epoch(tmp_path):
    task = RecommendationTask(_config(tmp_path, _file(tmp_path)))
    task.prepare(None, resume=False)
    assert task.epoch_batches(3) == task.epoch_batches(3) != task.epoch_batches(4)
    again = task.collate(task.epoch_batches(3)[0])
    for a, b in zip(task.collate(task.epoch_batches(3)[0]), again, strict=True):
        assert torch.equal(a, b)
    assert sorted(u for b in task.epoch_batches(1) for u, _ in b) == task.users


@pytest.mark.parametrize("kind", ["sasrec", "gru"])
def test_a_tiny_model_learns_the_cycle(tmp_path, kind):
    """Each user walks 1, 2, ..., 24, 1, ... from a random start: the next item is a function
    of the last, so the validation target ranks first among its 13 candidates."""
    cfg = _config(tmp_path, _file(tmp_path), f"model.kind={kind}")
    task = RecommendationTask(cfg)
    task.prepare(None, resume=False)
    torch.manual_seed(0)
    before = sampled_scores(task.build_model().eval(), cfg, task.split, "valid", task.valid_users)
    result = fit(RecommendationTask(cfg), tmp_path / "run")
    best = result.best
    assert before["ndcg10"] < 0.6 and best["valid_ndcg10"] > 0.95  # chance: about 0.3
    assert result.history[-1]["train_loss"] < 0.5 * result.history[0]["train_loss"]


def test_a_file_without_a_user_to_evaluate_is_refused(tmp_path):
    path = tmp_path / "short.tsv"
    path.write_text("1 1\n1 2\n2 3\n", encoding="utf-8")
    task = RecommendationTask(_config(tmp_path, path))
    with pytest.raises(DataError, match="short.tsv: no user has 3 or more"):
        task.prepare(None, resume=False)
