"""The image-classification task: configs, a short training run, evaluation and the CLI."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from typer.testing import CliRunner

import attnkit
from attnkit.application import EvaluateOptions
from attnkit.apps import app_of_run, task_of
from attnkit.apps.vision.app import APP
from attnkit.apps.vision.config import load_config
from attnkit.apps.vision.data import load_digits_split
from attnkit.apps.vision.training import accuracy
from attnkit.cli import app
from attnkit.config import ConfigError

ROOT = Path(__file__).resolve().parents[3]
TINY = """\
name: tiny
task: image-classification
model:
  patch_size: 4
  d_model: 32
  num_heads: 2
  num_layers: 1
  d_ff: 64
  dropout: 0.0
train:
  epochs: 3
  batch_size: 64
  learning_rate: 3.0e-3
  max_shift: 0
  patience: 1  # must never stop a run: there is no validation score
"""


@pytest.mark.parametrize(
    "path", sorted((ROOT / "configs").glob("digits-vit*.yaml")), ids=lambda p: p.name
)
def test_shipped_configs_load(path):
    assert task_of(path) == "image-classification"
    cfg = load_config(path)
    assert cfg.name == path.stem and cfg.data.source == "digits"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "task: image-classification\nmodel:\n  patch_sise: 2\n",
            r"c.yaml, line 3: unknown key 'patch_sise' in section 'model' \(did you mean",
        ),
        (
            "task: image-classification\nmodel:\n  image_size: 16\n",
            "digits' has 10 classes of 8 x 8 grey images; set model.image_size: 8",
        ),
        ("task: image-classification\ndata:\n  source: folder\n", "needs data.path"),
        (
            "task: image-classification\ndata:\n  source: mnist\n",
            "line 3: data.source is 'mnist'; choose one of 'digits', 'folder'",
        ),
        ("task: image-classification\nmodel:\n  patch_size: 3\n", "does not divide"),
        (
            "task: image-classification\ntrain:\n  epochs: 0\n",
            r"c.yaml, line 3: train.epochs must be at least 1, got 0",
        ),
        (
            "task: image-classification\ntrain:\n  batch_size: 0\n",
            "line 3: train.batch_size must be at",
        ),
        ("task: image-classification\ntrain:\n  max_scale: 1.5\n", "max_scale must be in"),
        ("task: image-classification\ntrain:\n  max_shift: -1\n", "max_shift must be at least 0"),
        ("task: image-classification\ntrain:\n  label_smoothing: 1\n", "label_smoothing must"),
        (
            "task: image-classification\ntrain:\n  schedule: plateau\n",
            "line 3: train.schedule 'plateau' needs a",
        ),
        ("task: image-classification\ntrain:\n  max_shif: 1\n", "did you mean 'max_shift'"),
        ("task: image-classification\ndata:\n  test_size: 1.0\n", "test_size must be in"),
    ],
)
def test_config_errors_name_the_file_and_field(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 3-epoch run of a one-layer ViT with 4 x 4 patches on the digits."""
    torch.manual_seed(0)
    config = tmp_path_factory.mktemp("cfg") / "tiny.yaml"
    config.write_text(TINY)
    run = tmp_path_factory.mktemp("runs") / "tiny"
    summary = APP.train(APP.load_config(config), run)
    return run, summary


def test_short_training_learns_digits(trained):
    run, trained_ = trained
    assert (run / "config.yaml").is_file() and (run / "model.safetensors").is_file()
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["test_accuracy"] > 0.6  # chance is 0.1
    assert [h["epoch"] for h in metrics["history"]] == [1, 2, 3]  # patience 1 never fired
    assert metrics["history"][-1]["train_loss"] < metrics["history"][0]["train_loss"]
    assert metrics["best_epoch"] == 3 and metrics["n_parameters"] > 0
    assert metrics["train_seconds"] > 0 and metrics["train_cpu_seconds"] > 0
    assert trained_.metrics["test_accuracy"] == metrics["test_accuracy"]
    assert trained_.best_epoch == 3 and trained_.epochs == 3
    assert json.loads((run / "classes.json").read_text()) == [str(i) for i in range(10)]
    # the saved model reproduces the measured accuracy, through the registry too
    loaded = attnkit.load_run(run)
    assert accuracy(loaded.model, load_digits_split()["test"]) == metrics["test_accuracy"]
    assert app_of_run(run) is APP
    scores = APP.evaluate(run, EvaluateOptions())
    assert scores.metrics == {"accuracy": metrics["test_accuracy"]} and scores.count == 360
    with pytest.raises(ValueError, match="split must be 'train' or 'test'"):
        APP.evaluate(run, EvaluateOptions(split="valid"))
    with pytest.raises(ValueError, match="keeps best only"):
        attnkit.load_run(run, "averaged")


def test_resume_after_the_last_epoch_changes_nothing(trained):
    run, _ = trained
    before = json.loads((run / "metrics.json").read_text())
    APP.train(APP.load_config(run / "config.yaml"), run, resume=True)
    after = json.loads((run / "metrics.json").read_text())
    assert after["history"] == before["history"]
    assert after["test_accuracy"] == before["test_accuracy"]


def test_deletion_logic_on_the_trained_model(trained):
    run = attnkit.load_run(trained[0])
    model, test = run.model, load_digits_split()["test"]
    rows = run.deletion_test(test, ks=(0, 2, 4), fill="zero")
    assert [r["k"] for r in rows] == [0, 2, 4]
    clean = accuracy(model, test)
    assert rows[0]["rollout"] == rows[0]["random"] == clean  # k = 0 deletes nothing
    blank = accuracy(model, type(test)(torch.zeros_like(test.images), test.labels, test.names))
    assert rows[2]["rollout"] == rows[2]["random"] == blank  # k = N deletes everything
    with pytest.raises(ValueError, match="between 0 and 4"):
        run.deletion_test(test, ks=(5,))
    with pytest.raises(ValueError, match="fill must be"):
        run.deletion_test(test, fill="noise")


def test_cli_evaluate_rollout_and_deletion(trained, tmp_path):
    run, _ = trained
    runner = CliRunner()
    accuracy = json.loads((run / "metrics.json").read_text())["test_accuracy"]
    result = runner.invoke(app, ["evaluate", str(run)])
    assert result.exit_code == 0, result.output
    assert result.output == f"{run} test: accuracy {accuracy:.4g} (360 images)\n"
    result = runner.invoke(app, ["evaluate", str(run), "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["metrics"] == {"accuracy": accuracy} and scores["unit"] == "images"
    out = tmp_path / "maps.png"
    command = ["vision", "rollout", str(run), "--output", str(out), "--count", "4"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    with Image.open(out) as img:
        assert img.size[0] > 100
    result = runner.invoke(app, ["vision", "deletion", str(run), "--k", "1,2"])
    assert result.exit_code == 0, result.output
    assert "rollout top-k deleted" in result.output
    assert f"test: accuracy {accuracy:.4f} (360 images)" in result.output
    result = runner.invoke(app, ["vision", "deletion", str(run), "--k", "0", "--json"])
    table = json.loads(result.output)["tables"][0]
    assert table["rows"] == [[0, accuracy, accuracy]]  # k = 0 deletes nothing
    result = runner.invoke(app, ["deletion", str(run), "--k", "1"])  # the old name, moved
    assert result.exit_code == 0 and "moved to `attnkit vision deletion`" in result.output
    result = runner.invoke(app, ["vision", "rollout", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "nope: no such run directory" in result.output
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["vision", "rollout", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "config.yaml: missing" in result.output


def test_a_run_of_another_kind_is_refused_in_one_line(tmp_path):
    other = tmp_path / "captions"
    other.mkdir()
    (other / "config.yaml").write_text("name: c\ntask: captioning\n")
    for command in (["rollout"], ["deletion"], ["classify-images"]):
        args = ["vision", *command, str(other)] + (
            ["a.png"] if command == ["classify-images"] else []
        )
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        assert result.output.strip() == (
            f"attnkit vision {command[0]}: error: {other} is a captioning run; "
            f"attnkit vision {command[0]} needs an image-classification run"
        )


def test_folder_training_and_classify_images(tmp_path):
    """Two classes that differ in which half is bright; the CLI classifies new files."""
    rng = np.random.default_rng(0)
    for name, half in (("left", 0), ("right", 1)):
        for i in range(12):
            img = rng.integers(0, 60, (8, 8))
            img[:, 4 * half : 4 * half + 4] += 190
            folder = tmp_path / "data" / name
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(img.astype(np.uint8), mode="L").save(folder / f"{i}.png")
    config = tmp_path / "f.yaml"
    config.write_text(
        "task: image-classification\n"
        f"data:\n  source: folder\n  path: {tmp_path / 'data'}\n  test_size: 0.25\n"
        "model:\n  patch_size: 4\n  d_model: 16\n  num_heads: 2\n  num_layers: 1\n"
        "  d_ff: 32\n  dropout: 0.0\n  num_classes: 2\n"
        "train:\n  epochs: 10\n  batch_size: 6\n  learning_rate: 3.0e-3\n  max_shift: 0\n"
    )
    run = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", str(config), "--run-dir", str(run)])
    assert result.exit_code == 0, result.output
    assert "test_accuracy 1, train_accuracy" in result.output
    metrics = json.loads((run / "metrics.json").read_text())
    assert json.loads((run / "classes.json").read_text()) == ["left", "right"]
    assert metrics["test_accuracy"] == 1.0  # 6 held-out images, an easy cue
    files = [tmp_path / "data" / "left" / "0.png", tmp_path / "data" / "right" / "0.png"]
    command = ["vision", "classify-images", str(run), *map(str, files)]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.output.strip().splitlines()]
    assert [line[1] for line in lines] == ["left", "right"]
    out = tmp_path / "predicted.tsv"
    result = CliRunner().invoke(app, ["predict", str(run), *map(str, files), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert [line.split("\t")[1] for line in out.read_text().splitlines()] == ["left", "right"]
    wrong = tmp_path / "c.yaml"
    wrong.write_text(config.read_text().replace("num_classes: 2", "num_classes: 3"))
    with pytest.raises(ConfigError, match=r"has 2 classes \['left', 'right'\] but model.num_"):
        APP.train(APP.load_config(wrong), tmp_path / "run2")
