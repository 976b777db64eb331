"""Issue 35 item 1, every task: a config that leaves no training examples is an error (one
line, exit 2) before anything is trained, and no model is written as if it were trained."""

import pytest
import yaml
from tests.test_kill_resume_every_task import CONFIGS
from typer.testing import CliRunner

from attnkit.cli import app

EMPTY = {  # the section and field that leave the training split empty, per task
    "translation": ("data", {"generated_sizes": [0, 20, 20]}),
    "text-classification": ("data", {"generated_sizes": [0, 40, 0]}),
    "captioning": ("data", {"n_train": 0}),
    "anomaly-detection": ("data", {"series": 0}),
    "segmentation": ("data", {"sizes": [0, 4, 4]}),
    "stocks": ("data", {"days": 6}),  # fewer days than window + horizon
    "im2latex": ("data", {"generated": [0, 4, 4]}),
    "image-classification": ("data", {"source": "folder", "path": "EMPTY"}),  # classes, no PNG
    "language-model": ("data", {"block_size": 2_000_000}),  # no block fits the text
    "speech": ("data", {"counts": [0, 4, 4]}),
    "recommendation": ("data", {"path": "SHORT"}),  # no user with 3 items: none to evaluate
    "summarization": ("data", {"train_path": "BLANK"}),  # a file of blank lines: no paper
}


@pytest.mark.parametrize("task", sorted(EMPTY))
def test_no_training_examples_is_an_error(task, tmp_path):
    section, fields = EMPTY[task]
    cfg = {**CONFIGS[task], "name": "empty"}
    cfg[section] = {**cfg[section], **fields}
    if fields.get("path") == "EMPTY":
        for name in ("cat", "dog"):
            (tmp_path / "images" / name).mkdir(parents=True)
        cfg[section]["path"] = str(tmp_path / "images")
    if fields.get("path") == "SHORT":
        (tmp_path / "short.tsv").write_text("1 1\n1 2\n2 3\n", encoding="utf-8")
        cfg[section]["path"] = str(tmp_path / "short.tsv")
    if fields.get("train_path") == "BLANK":
        (tmp_path / "train.jsonl").write_text("\n\n", encoding="utf-8")
        cfg[section]["train_path"] = str(tmp_path / "train.jsonl")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if "error:" in line]
    assert len(error) == 1, result.output
    assert not list(tmp_path.rglob("model.safetensors"))
