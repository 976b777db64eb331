"""Issue 35 item 5 for image to LaTeX: ``evaluate RUN --src IMAGES --ref FORMULAS`` scores a
user's own formula images (a folder sorted by name, or a list of paths) against one formula a
line with the split's report (BLEU, exact and image match); faults are named with the file
and line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from PIL import Image
from sacrebleu.metrics import BLEU
from typer.testing import CliRunner

from attnkit.apps.im2latex.config import FormulaDataConfig
from attnkit.apps.im2latex.own import own_pairs
from attnkit.apps.im2latex.render import render
from attnkit.apps.im2latex.tokens import normalise
from attnkit.cli import app

TINY = {
    "name": "tiny", "task": "im2latex",
    "data": {"generated": [32, 2, 2], "max_tokens": 10, "max_height": 64, "max_width": 256},
    "model": {"channels": [4, 8], "pools": [[2, 2], [2, 2]], "d_row": 6, "d_embed": 8,
              "d_hidden": 16, "d_attention": 8},
    "train": {"epochs": 1, "batch_size": 16, "max_len": 14, "beam": 1, "warmup_steps": 2},
}  # fmt: skip
FORMULAS = {"2.png": "x ^ { 2 } + y", "10.png": r"\frac { a } { b }", "b.png": r"\alpha - 1"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("im2latex-own")
    (tmp / "c.yaml").write_text(yaml.safe_dump(TINY), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(tmp / "c.yaml"), "-o", str(tmp / "run")])
    assert result.exit_code == 0, result.output
    return tmp / "run"


def _save(path, latex):
    """Black ink on white paper, two-level (so predict's crop and a folder's agree)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ink = render(latex) > 0.5
    Image.fromarray(np.pad(np.where(ink, 0, 255).astype(np.uint8), 6, constant_values=255)).save(
        path
    )


def _evaluate(run, src, ref, *extra):
    args = ["evaluate", str(run), "--src", str(src), "--ref", str(ref), *extra]
    return CliRunner().invoke(app, args)


def test_own_formula_images_score_like_a_split(run, tmp_path):
    for name, latex in FORMULAS.items():
        _save(tmp_path / "imgs" / name, latex)
    refs = tmp_path / "formulas.txt"
    refs.write_text("".join(f"{FORMULAS[n]}\n" for n in FORMULAS), encoding="utf-8")
    out = tmp_path / "read.txt"
    result = _evaluate(run, tmp_path / "imgs", refs, "--output", str(out), "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["split"] == str(tmp_path / "imgs") and scores["count"] == 3
    assert scores["unit"] == "formulas" and scores["written"] == [str(out)]
    assert not list(run.glob("evaluation-*.json"))  # own files are not kept in the run
    read = out.read_text(encoding="utf-8").splitlines()
    files = [str(tmp_path / "imgs" / n) for n in FORMULAS]  # 2.png, 10.png, b.png
    predicted = CliRunner().invoke(app, ["predict", str(run), *files])
    assert [line.split("\t")[1] for line in predicted.output.splitlines()] == read
    truth = [" ".join(normalise(f)) for f in FORMULAS.values()]
    right = [p == t for p, t in zip(read, truth, strict=True)]
    assert scores["metrics"]["exact_match"] == sum(right) / 3
    bleu = BLEU(tokenize="none").corpus_score(read, [truth]).score
    assert scores["metrics"]["bleu"] == pytest.approx(bleu)
    listing = tmp_path / "imgs" / "list.txt"  # listed the other way round, refs too
    listing.write_text("".join(f"{n}\n" for n in reversed(FORMULAS)), encoding="utf-8")
    refs.write_text("".join(f"{FORMULAS[n]}\n" for n in reversed(FORMULAS)), encoding="utf-8")
    listed = _evaluate(run, listing, refs, "--output", str(out), "--json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout)["metrics"] == scores["metrics"]
    assert out.read_text(encoding="utf-8").splitlines() == read[::-1]


def test_each_image_gets_its_formula_in_name_order(tmp_path):
    inks = {}
    for name, latex in FORMULAS.items():
        _save(tmp_path / "imgs" / name, latex)
        ink = render(latex) > 0.5
        rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        inks[name] = ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    refs = tmp_path / "formulas.txt"
    refs.write_text("".join(f"{FORMULAS[n]}\n" for n in FORMULAS), encoding="utf-8")
    found = own_pairs(tmp_path / "imgs", refs, FormulaDataConfig(max_height=64, max_width=256))
    assert found.names == [str(tmp_path / "imgs" / n) for n in FORMULAS]
    assert found.formulas == [normalise(f) for f in FORMULAS.values()]
    for image, ink in zip(found.images, inks.values(), strict=True):  # cropped, 4 pixels around
        assert np.array_equal(image[4:-4, 4:-4] > 0.5, ink)


def _fails(run, src, ref) -> str:
    result = _evaluate(run, src, ref)
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


def test_bad_own_formulas_and_images_are_named(run, tmp_path):
    _save(tmp_path / "a.png", "x + 1")
    Image.fromarray(np.full((20, 40), 255, np.uint8)).save(tmp_path / "blank.png")
    listing, refs = tmp_path / "list.txt", tmp_path / "refs.txt"
    listing.write_text("a.png\nblank.png\n", encoding="utf-8")
    refs.write_text("x + 1\n\\frac { x\n", encoding="utf-8")
    assert f"{refs}, line 2: " in _fails(run, listing, refs)
    refs.write_text("x + 1\n\n", encoding="utf-8")
    assert f"{refs}, line 2: an empty line, expected one formula a line" in (
        _fails(run, listing, refs)
    )
    refs.write_text("x + 1\ny\n", encoding="utf-8")
    found = _fails(run, listing, refs)
    assert f"{listing}, line 2: {tmp_path / 'blank.png'}: no ink: the image is blank" in found
    refs.write_text("x + 1\n", encoding="utf-8")
    assert f"{listing} has 2 lines and {refs} 1:" in _fails(run, listing, refs)
