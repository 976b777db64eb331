"""`attnkit.load_run(path)` for every task: the run comes back as its task's object, and its
`predict` gives outputs with their attention, ready for the heatmaps and notebook views."""

from __future__ import annotations

import pytest
import torch
import yaml
from tests.test_kill_resume_every_task import CONFIGS  # the same tiny configs
from typer.testing import CliRunner

import attnkit
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


def _check_im2latex(run):
    image = torch.zeros(20, 60)
    image[5:15, 10:50] = 1.0  # (H, W), 1 = ink
    (reading,) = run.read([image.numpy()], beam=2, attention=True)
    steps = len(reading.tokens) + int(reading.finished)  # the EOS step, when there is one
    assert reading.attention.shape == (steps, 5, 15)  # 4 x 4 pixel cells
    assert torch.allclose(torch.from_numpy(reading.attention).sum((1, 2)), torch.ones(1))
    (tokens,) = run.predict([image.numpy()])
    assert all(isinstance(t, str) for t in tokens)


CHECKS = {
    "translation": _check_translation,
    "text-classification": _check_classification,
    "image-classification": _check_vision,
    "captioning": _check_captioning,
    "anomaly-detection": _check_anomaly,
    "segmentation": _check_segmentation,
    "stocks": _check_stocks,
    "im2latex": _check_im2latex,
}


@pytest.mark.parametrize("task", sorted(CHECKS))
def test_load_run_gives_the_tasks_object(task, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**CONFIGS[task], "name": "tiny"}), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    run = attnkit.load_run(tmp_path / "run")
    assert run.task == task if hasattr(run, "task") else task == "text-classification"
    CHECKS[task](run)
