"""Issue 35 item 5 for captioning: ``evaluate RUN --src PICTURES --ref CAPTIONS`` scores a
user's own pictures (a folder sorted by name, or a list of paths) against one caption a line
with BLEU and exact match (attention correctness needs boxes a caption does not give); faults
are named with the file and line."""

import json

import numpy as np
import pytest
import yaml
from PIL import Image
from sacrebleu.metrics import BLEU
from tests.test_kill_resume_every_task import CONFIGS
from typer.testing import CliRunner

import attnkit
from attnkit.application import EvaluateOptions
from attnkit.apps.captioning.app import APP
from attnkit.apps.captioning.inference import Caption
from attnkit.apps.captioning.run import CaptioningRun
from attnkit.cli import app


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("caption-own")
    (tmp / "c.yaml").write_text(yaml.safe_dump(CONFIGS["captioning"]), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(tmp / "c.yaml"), "-o", str(tmp / "run")])
    assert result.exit_code == 0, result.output
    return tmp / "run"


def _scenes(run, folder):
    """The run's validation scenes saved as ``folder/0.png`` ..., and their captions."""
    folder.mkdir(parents=True, exist_ok=True)
    scenes = attnkit.load_run(run, device="cpu").scenes("valid")
    for k, scene in enumerate(scenes):
        Image.fromarray(np.rint(scene.image * 255).astype(np.uint8)).save(folder / f"{k}.png")
    return [folder / f"{k}.png" for k in range(len(scenes))], [s.caption for s in scenes]


def _evaluate(run, src, ref, *extra):
    args = ["evaluate", str(run), "--src", str(src), "--ref", str(ref), *extra]
    return CliRunner().invoke(app, args)


def test_own_pictures_score_like_a_split(run, tmp_path):
    files, captions = _scenes(run, tmp_path / "pics")  # 0.png ... 5.png
    refs = tmp_path / "captions.txt"
    refs.write_text("".join(f"{c}\n" for c in captions), encoding="utf-8")
    result = _evaluate(run, tmp_path / "pics", refs, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["split"] == str(tmp_path / "pics") and scores["count"] == len(files)
    assert list(scores["metrics"]) == ["bleu", "exact_match", "bleu_signature"]
    predicted = CliRunner().invoke(app, ["predict", str(run), *map(str, files)])
    said = [line.split("\t")[1] for line in predicted.output.splitlines()]
    right = [s == c for s, c in zip(said, captions, strict=True)]
    assert scores["metrics"]["exact_match"] == pytest.approx(sum(right) / len(files))
    bleu = BLEU().corpus_score(said, [captions]).score
    assert scores["metrics"]["bleu"] == pytest.approx(bleu)
    refs.write_text("".join(f"{s}\n" for s in said), encoding="utf-8")  # its own captions
    listing = tmp_path / "pics.txt"
    listing.write_text("".join(f"pics/{f.name}\n" for f in files), encoding="utf-8")
    itself = json.loads(_evaluate(run, listing, refs, "--json").stdout)
    assert itself["metrics"]["exact_match"] == 1.0
    assert itself["metrics"]["bleu"] == pytest.approx(100.0)
    assert str(listing) not in json.loads((run / "metrics.json").read_text())


def test_each_picture_is_scored_against_its_own_caption(run, tmp_path, monkeypatch):
    """A stand-in model that names each picture's colour: the pairing alone decides."""
    colours = {"red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255)}
    (tmp_path / "pics").mkdir()
    for k, rgb in enumerate(colours.values()):  # 0.png red, 1.png green, 2.png blue
        Image.fromarray(np.full((16, 16, 3), rgb, np.uint8)).save(tmp_path / "pics" / f"{k}.png")

    def name_colours(self, images):  # (N, 3, S, S)
        names = [list(colours)[int(np.argmax(im.mean(axis=(1, 2))))] for im in images]
        return [Caption([name], np.zeros((1, 16))) for name in names]

    monkeypatch.setattr(CaptioningRun, "predict", name_colours)
    refs = tmp_path / "captions.txt"
    refs.write_text("red\ngreen\nblue\n", encoding="utf-8")
    scores = APP.evaluate(run, EvaluateOptions(src=tmp_path / "pics", ref=refs, device="cpu"))
    assert scores.metrics["exact_match"] == 1.0
    refs.write_text("blue\ngreen\nred\n", encoding="utf-8")
    scores = APP.evaluate(run, EvaluateOptions(src=tmp_path / "pics", ref=refs, device="cpu"))
    assert scores.metrics["exact_match"] == pytest.approx(1 / 3)


def _fails(run, src, ref) -> str:
    result = _evaluate(run, src, ref)
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


def test_bad_own_pictures_and_captions_are_named(run, tmp_path):
    files, captions = _scenes(run, tmp_path / "pics")
    refs = tmp_path / "captions.txt"
    refs.write_text("".join(f"{c}\n" for c in captions[:-1]), encoding="utf-8")
    found = _fails(run, tmp_path / "pics", refs)
    assert f"{tmp_path / 'pics'} has {len(files)} images and {refs} {len(files) - 1} lines" in found
    listing = tmp_path / "pics" / "list.txt"
    (tmp_path / "pics" / "bad.png").write_bytes(b"not a picture")
    listing.write_text("0.png\nbad.png\n", encoding="utf-8")
    refs.write_text("a red circle\n\n", encoding="utf-8")
    found = _fails(run, listing, refs)
    assert f"{refs}, line 2: an empty line, expected one caption a line" in found
    refs.write_text("a red circle\na blue square\n", encoding="utf-8")
    found = _fails(run, listing, refs)
    assert f"{listing}, line 2: {tmp_path / 'pics' / 'bad.png'}: not an image Pillow" in found
