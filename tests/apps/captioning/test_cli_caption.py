"""``attnkit train / evaluate / caption`` for a captioning config, end to end on tiny data."""

import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from attnkit.cli import app

runner = CliRunner()

CONFIG = """\
name: tiny-scenes
task: captioning
data: {canvas: 16, n_train: 40, n_valid: 8, n_test: 6, max_objects: 2, min_size: 5, max_size: 7}
model: {attention: MODE, canvas: 16, grid: 4, d_feature: 8, d_embed: 8, d_hidden: 16,
        d_attention: 8}
train: {epochs: 2, updates_per_epoch: 3, batch_size: 8, max_len: 9}
"""


@pytest.mark.parametrize("mode", ["soft", "hard", "none"])
def test_train_evaluate_caption(tmp_path, mode):
    config = tmp_path / "tiny.yaml"
    config.write_text(CONFIG.replace("MODE", mode))
    run = tmp_path / "run"
    result = runner.invoke(app, ["train", str(config), "--run-dir", str(run)])
    assert result.exit_code == 0, result.output
    assert "kept epoch" in result.stdout and "best_step" in result.stdout
    assert "valid_pointing" in result.stdout
    for name in ("config.yaml", "model.safetensors", "vocab.json", "metrics.json"):
        assert (run / name).is_file()
    assert "<eos>" in json.loads((run / "vocab.json").read_text())["words"]

    result = runner.invoke(app, ["evaluate", str(run)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{run} test: bleu ") and "exact_match" in result.stdout
    assert result.stdout.strip().endswith("(6 captions)")
    test = json.loads((run / "metrics.json").read_text())["test"]
    assert test["n"] == 6 and 0 <= test["pointing"] <= 1 and "nrefs:1" in test["bleu_signature"]
    result = runner.invoke(app, ["evaluate", str(run), "--split", "valid", "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["count"] == 8 and scores["unit"] == "captions"
    assert (
        0 <= scores["metrics"]["bleu"] <= 100 and "nrefs:1" in scores["metrics"]["bleu_signature"]
    )

    pictures = tmp_path / "pictures"
    command = ["captioning", "caption", str(run), "--output", str(pictures), "--count", "2"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 and "(truth: a " in lines[0]
    assert sorted(p.name for p in pictures.iterdir()) == ["test-000.png", "test-001.png"]

    if mode == "soft":  # a picture file of another size is resized to the canvas
        Image.new("RGB", (40, 30), (200, 10, 10)).save(tmp_path / "red.png")
        command = ["captioning", "caption", str(run), "--image", str(tmp_path / "red.png")]
        result = runner.invoke(app, command)
        assert result.exit_code == 0 and result.stdout.startswith("red\t")
        drawn = result.stdout.strip().split("\t")[1]
        result = runner.invoke(app, ["predict", str(run), str(tmp_path / "red.png")])
        assert result.exit_code == 0, result.output
        assert result.stdout.strip().split("\t") == [str(tmp_path / "red.png"), drawn]
        (tmp_path / "bad.png").write_text("not a picture")
        result = runner.invoke(app, ["caption", str(run), "-i", str(tmp_path / "bad.png")])
        assert result.exit_code == 2 and "bad.png: not an image" in result.output


def test_errors_are_one_line(tmp_path):
    result = runner.invoke(app, ["captioning", "caption", str(tmp_path)])
    assert result.exit_code == 2 and "config.yaml: missing" in result.output
    other = tmp_path / "vit"
    other.mkdir()
    (other / "config.yaml").write_text("name: v\ntask: image-classification\n")
    result = runner.invoke(app, ["captioning", "caption", str(other)])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"attnkit captioning caption: error: {other} is an image-classification run; "
        "attnkit captioning caption needs a captioning run"
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: captioning\ntrain:\n  stpes: 3\n")
    result = runner.invoke(app, ["train", str(bad), "--run-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "bad.yaml, line 3: unknown key 'stpes' in section 'train'" in result.output


def test_read_image_names_a_missing_file_a_directory_and_a_truncated_picture(tmp_path):
    """Issue 15: every image reader names the file and what is wrong with it."""
    import numpy as np
    from PIL import Image

    from attnkit.apps.captioning.inference import read_image
    from attnkit.errors import DataError

    with pytest.raises(DataError, match="gone.png: file not found"):
        read_image(tmp_path / "gone.png", 8)
    with pytest.raises(DataError, match="is a directory, expected a file"):
        read_image(tmp_path, 8)
    good = tmp_path / "good.png"
    pixels = np.random.default_rng(0).integers(0, 255, (32, 32, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(good)
    (tmp_path / "cut.png").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DataError, match="cut.png: cannot read the image"):
        read_image(tmp_path / "cut.png", 8)
    assert read_image(good, 8).shape == (8, 8, 3)
