"""The recommendation application through the command line: train, evaluate on both
protocols, predict from a history file with a picture, and bad histories refused in one line
naming the file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from matplotlib.image import imread
from typer.testing import CliRunner

import attnkit
from attnkit.apps.recommendation.app import parse_history
from attnkit.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("rec")
    rng = np.random.default_rng(0)
    lines = []
    for user in range(1, 81):
        start, n = int(rng.integers(1, 25)), int(rng.integers(5, 12))
        lines += [f"{user},{(start + k - 1) % 24 + 1},{1000 + k}" for k in range(n)]
    data = root / "cycle.csv"
    data.write_text("user,item,time\n" + "\n".join(lines) + "\n", encoding="utf-8")
    config = root / "c.yaml"
    config.write_text(
        f"""name: tiny
task: recommendation
data: {{path: {data}, negatives: 10, rule: unseen, valid_users: null, eval_users: null}}
model: {{max_len: 8, d_model: 16, n_blocks: 2, heads: 2, dropout: 0.0}}
train: {{epochs: 8, batch_size: 16, learning_rate: 0.01, threads: 1, tensorboard: false}}
""",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["train", str(config), "-o", str(root / "run")])
    assert result.exit_code == 0, result.output
    return root / "run"


def test_evaluate_scores_both_protocols(run):
    result = runner.invoke(app, ["evaluate", str(run), "--split", "test", "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["count"] == 80 and scores["unit"] == "users"
    metrics = scores["metrics"]
    assert metrics["sampled_ndcg10"] > 0.9  # the cycle is learnt: chance is about 0.35
    assert metrics["full_hr10"] >= metrics["full_ndcg10"] >= metrics["full_mrr"] > 0.5
    record = json.loads((run / "evaluation-test.json").read_text(encoding="utf-8"))
    assert record["sampled"]["hr10"] == metrics["sampled_hr10"] and record["rule"] == "unseen"


def test_predict_a_history_with_its_attention(run, tmp_path):
    history = tmp_path / "history.txt"
    history.write_text("5\n6\n7\n", encoding="utf-8")
    picture = tmp_path / "attention.png"
    command = ["predict", str(run), str(history), "--picture", str(picture)]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.output.splitlines() if line.startswith(str(history))]
    assert row.split("\t")[1].split()[0] == "8"  # 5, 6, 7 -> 8 first
    pixels = imread(picture)
    assert pixels.ndim == 3 and float(pixels.std()) > 0.01


def test_load_run_recommends_and_refuses_unknown_items(run):
    loaded = attnkit.load_run(run)
    assert loaded.recommend([5, 6, 7], k=3)[0][0] == 8
    with pytest.raises(ValueError, match="item 99 is not one of this run's items 1..24"):
        loaded.recommend([5, 99])
    with pytest.raises(ValueError, match="splits valid and test"):
        loaded.evaluate("train")


@pytest.mark.parametrize(
    ("text", "words"), [("5 six 7", "'six' is not an item id"), ("  \n", "no item ids")]
)
def test_a_bad_history_is_one_line_naming_the_file(run, tmp_path, text, words):
    history = tmp_path / "bad.txt"
    history.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["predict", str(run), str(history)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if "error" in line]
    assert len(errors) == 1 and str(history) in errors[0] and words in errors[0]
    with pytest.raises(ValueError, match=words):
        parse_history(text, "x")
