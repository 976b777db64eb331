"""Issue 35 item 5 for image classification: ``evaluate RUN --src IMAGES --ref CLASSES``
scores a user's own images (a folder sorted by name, or a list of paths) against a class name
a line, as a split is scored; faults are named with the file and line."""

import json

import numpy as np
import pytest
import yaml
from PIL import Image
from tests.test_kill_resume_every_task import CONFIGS
from typer.testing import CliRunner

import attnkit
from attnkit.cli import app


def _image(path, half, rng):
    img = rng.integers(0, 60, (8, 8))
    img[:, 4 * half : 4 * half + 4] += 190
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(img.astype(np.uint8), mode="L").save(path)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny ViT trained on a folder of two classes (which half of the image is bright)."""
    tmp = tmp_path_factory.mktemp("vision-own")
    rng = np.random.default_rng(0)
    for name, half in (("left", 0), ("right", 1)):
        for i in range(12):
            _image(tmp / "data" / name / f"{i}.png", half, rng)
    config = tmp / "f.yaml"
    config.write_text(
        "task: image-classification\n"
        f"data:\n  source: folder\n  path: {tmp / 'data'}\n  test_size: 0.25\n"
        "model:\n  patch_size: 4\n  d_model: 16\n  num_heads: 2\n  num_layers: 1\n"
        "  d_ff: 32\n  dropout: 0.0\n  num_classes: 2\n"
        "train:\n  epochs: 6\n  batch_size: 6\n  learning_rate: 3.0e-3\n  max_shift: 0\n"
    )
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp / "run")])
    assert result.exit_code == 0, result.output
    return tmp / "run"


def _evaluate(run, src, ref, *extra):
    args = ["evaluate", str(run), "--src", str(src), "--ref", str(ref), *extra]
    return CliRunner().invoke(app, args)


def test_own_images_score_like_a_split(run, tmp_path):
    rng = np.random.default_rng(1)
    halves = [0, 1, 1, 0, 1]  # 2.png ... 10.png in natural order
    for n, half in zip([2, 3, 4, 5, 10], halves, strict=True):
        _image(tmp_path / "mine" / f"{n}.png", half, rng)
    refs = tmp_path / "classes.txt"
    truth = [["left", "right"][h] for h in halves]
    refs.write_text("\n".join(truth) + "\n", encoding="utf-8")
    result = _evaluate(run, tmp_path / "mine", refs, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["split"] == str(tmp_path / "mine") and scores["count"] == 5
    assert scores["unit"] == "images"
    files = [tmp_path / "mine" / f"{n}.png" for n in (2, 3, 4, 5, 10)]
    predicted = [c for c, _ in attnkit.load_run(run, device="cpu").classify_files(files)]
    right = sum(p == t for p, t in zip(predicted, truth, strict=True))
    assert scores["metrics"]["accuracy"] == right / 5
    listing = tmp_path / "mine" / "list.txt"  # the same images listed, relative to the list
    listing.write_text("".join(f"{f.name}\n" for f in files), encoding="utf-8")
    listed = _evaluate(run, listing, refs, "--json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout)["metrics"] == scores["metrics"]


def test_bad_own_files_are_named_with_file_and_line(run, tmp_path):
    rng = np.random.default_rng(2)
    for name in ("a.png", "b.png"):
        _image(tmp_path / "imgs" / name, 0, rng)
    refs = tmp_path / "refs.txt"
    refs.write_text("left\nmiddle\n", encoding="utf-8")
    result = _evaluate(run, tmp_path / "imgs", refs)
    assert result.exit_code == 2
    assert f"{refs}, line 2: 'middle' is not a class (left, right)" in result.output
    refs.write_text("left\n", encoding="utf-8")
    result = _evaluate(run, tmp_path / "imgs", refs)
    assert result.exit_code == 2
    assert f"{tmp_path / 'imgs'} has 2 images and {refs} 1 lines" in result.output
    (tmp_path / "broken.png").write_bytes(b"not a png")
    listing = tmp_path / "list.txt"
    listing.write_text("imgs/a.png\nbroken.png\n", encoding="utf-8")
    refs.write_text("left\nright\n", encoding="utf-8")
    result = _evaluate(run, listing, refs)
    assert result.exit_code == 2
    assert f"{listing}, line 2: {tmp_path / 'broken.png'}: cannot read this image" in (
        " ".join(result.output.split())
    )
    listing.write_text("imgs/a.png\nimgs/c.png\n", encoding="utf-8")
    result = _evaluate(run, listing, refs)
    assert result.exit_code == 2 and f"{listing}, line 2: " in result.output
    assert "c.png: no such image file" in result.output


def test_a_digits_run_refuses_image_files(tmp_path):
    config = tmp_path / "d.yaml"
    digits = {**CONFIGS["image-classification"], "train": {"epochs": 1, "batch_size": 256}}
    config.write_text(yaml.safe_dump(digits), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    _image(tmp_path / "imgs" / "a.png", 0, np.random.default_rng(3))
    (tmp_path / "refs.txt").write_text("0\n", encoding="utf-8")
    result = _evaluate(tmp_path / "run", tmp_path / "imgs", tmp_path / "refs.txt")
    assert result.exit_code == 2
    assert "trained on scikit-learn's digits (8 x 8, ink = 1); score its images" in result.output
