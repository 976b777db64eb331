"""Image to LaTeX through the command line on tiny generated formulas: train, evaluate (BLEU,
exact and image match) and predict with the per-token attention picture; the batches of an
epoch; a real-data run on three sample pages when ../shared/data is there."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

from attnkit.apps.im2latex.render import render
from attnkit.apps.im2latex.training import size_batches
from attnkit.apps.im2latex.views import attention_centres, on_image
from attnkit.cli import app
from attnkit.datadir import default_data_dir

TINY = {
    "name": "tiny", "task": "im2latex",
    "data": {"generated": [64, 6, 6], "max_tokens": 10, "max_height": 64, "max_width": 256},
    "model": {"channels": [4, 8], "pools": [[2, 2], [2, 2]], "d_row": 6, "d_embed": 8,
              "d_hidden": 16, "d_attention": 8},
    "train": {"epochs": 2, "batch_size": 16, "max_len": 14, "beam": 2, "warmup_steps": 2},
}  # fmt: skip


def _train(tmp_path, config: dict) -> tuple:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", str(path), "-o", str(run)])
    assert result.exit_code == 0, result.output
    return run, result.output


def test_train_evaluate_predict_with_the_attention_picture(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    run, out = _train(tmp_path, TINY)
    assert "valid_bleu" in out and (run / "vocab.json").is_file()
    result = CliRunner().invoke(app, ["evaluate", str(run), "--split", "test"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{run} test: bleu ") and "image_match" in result.output
    assert "beam 2 (6 formulas)" in result.output
    saved = json.loads((run / "evaluation-test.json").read_text())
    assert saved["n"] == 6 and len(saved["predictions"]) == 6 and 0 <= saved["bleu"] <= 100
    out = tmp_path / "greedy.txt"
    command = ["evaluate", str(run), "--beam", "1", "--output", str(out), "--json"]
    result = CliRunner().invoke(app, command)
    scored = json.loads(result.stdout)
    greedy = json.loads((run / "evaluation-test.json").read_text())
    assert scored["metrics"]["beam"] == greedy["beam"] == 1 and scored["count"] == 6
    assert scored["metrics"]["bleu"] == pytest.approx(greedy["bleu"])
    assert out.read_text().splitlines() == [p["prediction"] for p in greedy["predictions"]]
    image = tmp_path / "formula.png"
    ink = render(["x", "^", "{", "2", "}", "+", "y"])
    Image.fromarray(np.pad((255 * (1 - ink)).astype(np.uint8), 6, constant_values=255)).save(image)
    picture, text = tmp_path / "att.png", tmp_path / "out.txt"
    result = CliRunner().invoke(
        app, ["predict", str(run), str(image), "--picture", str(picture), "--output", str(text)]
    )
    assert result.exit_code == 0, result.output
    assert result.output == "" and picture.stat().st_size > 1000
    ((name, latex),) = [line.split("\t") for line in text.read_text().splitlines()]
    assert name == str(image) and isinstance(latex, str)
    result = CliRunner().invoke(app, ["report", str(run), "--examples", "2"])
    assert result.exit_code == 0, result.output
    page = (run / "report.html").read_text()
    assert page.count("<img") == 2 and "<td>test</td>" in page and "valid-1" in page


@pytest.mark.parametrize(
    ("option", "bad", "message"),
    [
        ({"decoder": "transformer", "layers": 1, "heads": 2, "d_ff": 16}, {"heads": 5},
         "heads (5) must divide d_hidden (16)"),
        ({"attention": "coarse_to_fine", "block": [2, 2], "coarse": "sparsemax"},
         {"block": [2, 0]}, "model.block must all be at least 1, got [2, 0]"),
    ],
)  # fmt: skip
def test_the_decoder_options_train_and_read(tmp_path, monkeypatch, option, bad, message):
    """The Transformer decoder and coarse-to-fine attention through the CLI; a bad value of
    theirs is refused at load, naming the file."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    model = {**TINY["model"], **option}
    run, out = _train(tmp_path, {**TINY, "model": model, "train": {**TINY["train"], "epochs": 1}})
    assert "valid_bleu" in out
    result = CliRunner().invoke(app, ["evaluate", str(run), "--split", "test"])
    assert result.exit_code == 0, result.output
    assert json.loads((run / "evaluation-test.json").read_text())["n"] == 6
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**TINY, "model": {**model, **bad}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path), "-o", str(tmp_path / "bad")])
    assert result.exit_code != 0 and "bad.yaml" in result.output
    assert message in result.output


def test_an_unknown_split_and_a_missing_image_are_clear_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    run, _ = _train(tmp_path, {**TINY, "train": {**TINY["train"], "epochs": 1}})
    result = CliRunner().invoke(app, ["evaluate", str(run), "--split", "real-test"])
    assert result.exit_code != 0 and "no split 'real-test'" in result.output
    result = CliRunner().invoke(app, ["predict", str(run), str(tmp_path / "none.png")])
    assert result.exit_code != 0 and "none.png" in result.output


def test_epoch_batches_visit_every_image_once_grouped_by_width():
    widths = list(np.random.default_rng(0).integers(10, 400, size=500))
    batches = size_batches(widths, seed=3, epoch=2, batch_size=16)
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert batches == size_batches(widths, seed=3, epoch=2, batch_size=16)
    assert batches != size_batches(widths, seed=3, epoch=3, batch_size=16)
    spread = np.mean([np.ptp([widths[i] for i in b]) for b in batches])
    assert spread < 0.2 * np.ptp(widths)  # similar widths share a batch


def test_attention_pictures_place_each_cell_on_its_pixels():
    maps = np.zeros((2, 2, 3))
    maps[0, 0, 0], maps[1, 1, 2] = 1.0, 1.0
    heat = on_image(maps[1], (7, 11), (4, 4))
    assert heat.shape == (7, 11) and heat[4:, 8:].min() == 1.0 and heat[:4].max() == 0.0
    np.testing.assert_allclose(attention_centres(maps, (4, 4)), [[2, 2], [6, 10]])


@pytest.mark.skipif(
    not (default_data_dir() / "im2latex-sample").is_dir(),
    reason="needs ../shared/data/im2latex-sample",
)
def test_real_pages_train_and_evaluate_on_the_real_test_split(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    config = {
        **TINY,
        "data": {
            **TINY["data"],
            "real": "im2latex-sample",
            "real_limit": 3,
            "valid": "real",
            "max_height": 96,
            "max_width": 384,
        },
    }
    config["train"] = {**TINY["train"], "epochs": 1, "max_len": 20}
    run, out = _train(tmp_path, config)
    result = CliRunner().invoke(app, ["evaluate", str(run), "--split", "real-test"])
    assert result.exit_code == 0, result.output
    assert "real-test: bleu " in result.output and "(3 formulas)" in result.output


def test_attention_movement_is_the_rank_correlation_of_step_and_column():
    from benchmarks.im2latex_attention import movement

    forward = np.zeros((4, 1, 4))
    forward[np.arange(4), 0, np.arange(4)] = 1.0  # step t looks at column t
    assert movement(forward, (8, 8)) == pytest.approx(1.0)
    assert movement(forward[::-1], (8, 8)) == pytest.approx(-1.0)
    assert movement(np.ones((5, 1, 3)), (8, 8)) is None  # the centre never moves


def test_the_own_data_example_config_loads(tmp_path):
    import re
    from pathlib import Path

    from attnkit.apps.im2latex.config import load_config

    page = Path(__file__).resolve().parents[3] / "docs" / "howto" / "own-data.md"
    blocks = re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if "task: im2latex" in b]
    config = tmp_path / "mine.yaml"
    config.write_text(block, encoding="utf-8")
    cfg = load_config(config)
    assert cfg.data.real == "data/my-formulas" and cfg.data.valid == "real"


def test_a_blank_image_is_refused_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    run, _ = _train(tmp_path, {**TINY, "train": {**TINY["train"], "epochs": 1}})
    blank = tmp_path / "blank.png"
    Image.fromarray(np.full((20, 60), 255, np.uint8)).save(blank)
    result = CliRunner().invoke(app, ["predict", str(run), str(blank)])
    assert result.exit_code == 2 and f"{blank}: no formula to read" in result.output


def test_a_run_of_another_kind_is_refused_in_one_line(tmp_path):
    from attnkit.application import WrongRunKind
    from attnkit.apps.im2latex.run import Im2LatexRun

    other = tmp_path / "runs" / "mycls"
    other.mkdir(parents=True)
    (other / "config.yaml").write_text("task: text-classification\nname: mycls\n")
    with pytest.raises(WrongRunKind) as caught:
        Im2LatexRun.load(other)
    assert caught.value.for_command("im2latex read") == (
        f"{other} is a text-classification run; attnkit im2latex read needs an im2latex run"
    )
