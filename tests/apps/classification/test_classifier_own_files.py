"""Issue 35 item 5 for classifiers: ``evaluate RUN --src texts.txt --ref labels.txt`` scores a
user's own labelled texts as a split is scored; files that do not pair up, and labels that are
not classes, are named with the file and line."""

import json

import yaml
from tests.test_kill_resume_every_task import CONFIGS
from typer.testing import CliRunner

import attnkit
from attnkit.cli import app


def _run(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(CONFIGS["text-classification"]), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    return tmp_path / "run"


def test_own_files_score_like_a_split_and_bad_ones_are_named(tmp_path):
    run = _run(tmp_path)
    texts, labels = tmp_path / "texts.txt", tmp_path / "labels.txt"
    texts.write_text("a fine and bright film\na dull tired plot\nnever dull\n", encoding="utf-8")
    labels.write_text("1\n0\n1\n", encoding="utf-8")
    args = ["evaluate", str(run), "--src", str(texts), "--ref", str(labels), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["split"] == str(texts) and scores["count"] == 3
    predicted, _ = attnkit.load_run(run, device="cpu").predict(texts.read_text().splitlines())
    right = sum(int(p == g) for p, g in zip(predicted, [1, 0, 1], strict=True))
    assert scores["metrics"]["accuracy"] == right / 3
    labels.write_text("1\n7\n1\n", encoding="utf-8")
    result = CliRunner().invoke(app, args[:-1])
    assert result.exit_code == 2 and f"{labels}, line 2: label '7' is not a class 0..1" in (
        result.output
    )
    labels.write_text("1\n0\n", encoding="utf-8")
    result = CliRunner().invoke(app, args[:-1])
    assert result.exit_code == 2 and f"{texts} has 3 lines and {labels} 2" in result.output
