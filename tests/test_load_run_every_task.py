"""`attnkit.load_run(path)` for every task: the run comes back as its task's object, and its
`predict` gives outputs with their attention, ready for the heatmaps and notebook views; its
App's `show` (what the report and the served page draw) gives each input's output with an
attention record or a picture."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
import yaml
from PIL import Image
from tests.test_kill_resume_every_task import CONFIGS  # the same tiny configs
from typer.testing import CliRunner

import attnkit
from attnkit.apps import app_named
from attnkit.cli import app


def _check_translation(run):
    (t,) = run.predict(["the black cat sleeps ."], beam=1, attention=True)
    cross = t.attention[0]["cross"]  # (H, T_out, S)
    assert cross.shape[-1] == len(t.src_pieces)
    assert torch.allclose(cross.sum(-1), torch.ones(cross.shape[:-1]), atol=1e-5)


def _check_classification(run):
    labels, weights = run.predict(["the film was never dull", "a dull and tired plot"])
    assert len(labels) == 2 and all(0 <= label < 2 for label in labels)
    assert abs(sum(w for _, w in weights[0]) - 1) < 1e-5


def _check_vision(run):
    pred = run.predict(torch.rand(3, 1, 8, 8))
    assert len(pred.classes) == 3 and pred.maps.shape[0] == 3


def _check_captioning(run):
    (caption,) = run.predict(torch.rand(1, 3, 16, 16))
    assert caption.alpha.shape[0] == len(caption.words)
    assert caption.alpha.shape[1] == 16  # 4 x 4 grid locations


def _check_anomaly(run):
    assert 0.0 <= run.threshold and run.config.data.source == "solar"


def _check_segmentation(run):
    out = run.predict(torch.rand(2, 1, 32, 32))
    assert out.logits.shape == (2, 1, 32, 32) and 0 <= out.logits.min() <= out.logits.max() <= 1
    assert [tuple(g.shape) for g in out.gates] == [(2, 1, 32, 32)]  # one gate at 2 levels


def _check_stocks(run):
    x = torch.randn(3, 5, len(run.config.data.columns))  # (N, T, F): standardised windows
    prices = run.predict(x)
    assert prices.shape == (3, 2) and (prices > 0).all()


def _check_language_model(run):
    text = run.generate("ROMEO:", max_new=12, seed=3)
    assert len(text) == 12 and text == run.generate("ROMEO:", max_new=12, seed=3)
    record = run.attention("ROMEO: But")
    assert len(record["self"]) == 1 and record["self"][0].shape == (2, 10, 10)


def _check_im2latex(run):
    image = torch.zeros(20, 60)
    image[5:15, 10:50] = 1.0  # (H, W), 1 = ink
    (reading,) = run.read([image.numpy()], beam=2, attention=True)
    steps = len(reading.tokens) + int(reading.finished)  # the EOS step, when there is one
    assert reading.attention.shape == (steps, 5, 15)  # 4 x 4 pixel cells
    assert torch.allclose(torch.from_numpy(reading.attention).sum((1, 2)), torch.ones(1))
    (tokens,) = run.predict([image.numpy()])
    assert all(isinstance(t, str) for t in tokens)


def _check_speech(run):
    features = np.random.default_rng(0).normal(size=(60, 40)).astype(np.float32)  # (frames, F)
    (t,) = run.transcribe([features], beam=2, attention=True)
    steps = len(t.tokens) + 1 if len(t.attention) > len(t.tokens) else len(t.tokens)
    assert t.attention.shape == (steps, 60 // 4)  # pyramid 2: 4 frames per annotation
    assert np.allclose(t.attention.sum(1), 1, atol=1e-5)
    assert all(token in "0123456789" for token in t.tokens)


def _check_recommendation(run):
    history = [6393, 13504, 14087]  # user 1's first items in Games
    top = run.recommend(history, k=5)
    assert len(top) == 5 and not {i for i, _ in top} & set(history)
    assert [s for _, s in top] == sorted((s for _, s in top), reverse=True)
    (weights,) = run.attention(history)  # one block, (H, L, L)
    assert weights.shape == (2, 3, 3) and np.allclose(weights.sum(-1), 1, atol=1e-5)
    assert np.allclose(np.triu(weights, 1), 0)  # causal: no position reads a later item


def _check_summarization(run):
    (found,) = run.summarize([ABSTRACT], beam=2)
    steps, sources = found.attention.shape  # (T, S): a row per output word, EOS included
    assert sources == len(found.source) and steps in (len(found.words), len(found.words) + 1)
    assert np.allclose(found.attention.sum(1), 1, atol=1e-5)
    assert ((found.p_gen >= 0) & (found.p_gen <= 1)).all() and len(found.p_gen) == steps
    assert np.allclose(found.coverage, found.attention.sum(0), atol=1e-5)


CHECKS = {
    "translation": _check_translation,
    "text-classification": _check_classification,
    "image-classification": _check_vision,
    "captioning": _check_captioning,
    "anomaly-detection": _check_anomaly,
    "segmentation": _check_segmentation,
    "stocks": _check_stocks,
    "im2latex": _check_im2latex,
    "language-model": _check_language_model,
    "speech": _check_speech,
    "recommendation": _check_recommendation,
    "summarization": _check_summarization,
}
ABSTRACT = "We propose a simple attention model that copies rare words from the source ."


def train_tiny(task: str, root) -> object:
    """The tiny run of ``task`` (the kill-resume test's config) trained into ``root/run``."""
    config = root / "c.yaml"
    config.write_text(yaml.safe_dump({**CONFIGS[task], "name": "tiny"}), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(root / "run")])
    assert result.exit_code == 0, result.output
    return root / "run"


def _png(path, array: np.ndarray) -> str:
    Image.fromarray(array.astype(np.uint8)).save(path)
    return path


def show_input(task: str, run, root):
    """One input of the kind the App's ``serve_input`` says, for ``run``."""
    rng = np.random.default_rng(0)
    if task == "translation":
        return "the black cat sleeps ."
    if task == "text-classification":
        return "the film was never dull"
    if task == "language-model":
        return "ROMEO: But soft"
    if task == "captioning":
        return _png(root / "in.png", rng.integers(0, 256, (16, 16, 3)))
    if task in ("image-classification", "segmentation"):
        return _png(root / "in.png", rng.integers(0, 256, (32, 32)))
    if task == "im2latex":
        from attnkit.apps.im2latex.render import render

        ink = render(["x", "^", "{", "2", "}", "+", "y"])
        return _png(root / "in.png", np.pad(255 * (1 - ink), 6, constant_values=255))
    if task == "speech":
        from attnkit.apps.speech.digits import fsdd_dir

        return fsdd_dir() / "3_george_0.wav"
    if task == "recommendation":
        return "6393 13504 14087"
    if task == "summarization":
        return ABSTRACT
    if task == "anomaly-detection":
        from attnkit.apps.anomaly.experiment import load_series
        from attnkit.apps.anomaly.timeseries import write_csv

        write_csv(load_series(run.config, "test")[0], root / "in.csv")
        return root / "in.csv"
    from attnkit.apps.stocks.series import write_csv
    from attnkit.apps.stocks.sets import load_sets

    return write_csv(load_sets(run.config.data).series, root / "in.csv")


def non_uniform_png(data: bytes) -> bool:
    """The PNG decodes (PIL) to an image whose pixels are not all one value."""
    pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    return pixels.ndim == 3 and min(pixels.shape[:2]) > 8 and float(pixels.std()) > 1.0


def check_shown(shown) -> None:
    """An output, and an attention record whose rows sum to 1 or a picture worth looking at."""
    assert isinstance(shown.output, str) and shown.output.strip()
    assert shown.record is not None or shown.picture is not None
    if shown.picture is not None:
        assert non_uniform_png(shown.picture)
    if shown.record is not None:
        for name in shown.record.names:
            w = shown.record[name][-1]  # (H, Tq, Tk)
            assert torch.allclose(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-4), name


@pytest.mark.parametrize("task", sorted(CHECKS))
def test_load_run_gives_the_tasks_object(task, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    run = attnkit.load_run(train_tiny(task, tmp_path))
    assert run.task == task if hasattr(run, "task") else task == "text-classification"
    CHECKS[task](run)
    found = app_named(task)
    assert found.serve_input in ("text", "image", "csv", "audio")
    given = show_input(task, run, tmp_path)
    (shown,) = found.show(run, [given])
    assert shown.input == str(given)
    check_shown(shown)
