"""Captioning on the training engine: a hard-attention run interrupted in the middle of an
epoch and resumed from its last step checkpoint ends bit for bit where an uninterrupted run
ends (weights, validation history and the REINFORCE baseline, which is the task's own state)."""

import json

import pytest
import torch
from safetensors.torch import load_file

from attnkit.apps.captioning.config import CaptioningConfig, CaptionTrainConfig, SceneDataConfig
from attnkit.apps.captioning.model import CaptionerConfig
from attnkit.apps.captioning.training import CaptioningTask, select_score
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import fit


def tiny_hard() -> CaptioningConfig:
    """3 epochs of 5 updates, a step checkpoint every 2 updates; half the images sampled."""
    return CaptioningConfig(
        name="tiny-hard",
        data=SceneDataConfig(
            canvas=16, n_train=40, n_valid=6, n_test=2, max_objects=2, min_size=5, max_size=7
        ),
        model=CaptionerConfig(
            attention="hard",
            canvas=16,
            grid=4,
            d_feature=8,
            d_embed=8,
            d_hidden=16,
            d_attention=8,
            hard_expectation=0.5,
            dropout=0.1,
        ),
        train=CaptionTrainConfig(
            epochs=3,
            updates_per_epoch=5,
            batch_size=8,
            max_len=9,
            checkpoint_every=2,
            warmup_steps=3,
            learning_rate=0.01,
        ),
    )


class Interrupted(RuntimeError):
    pass


class DiesAfter(CaptioningTask):
    """Raises inside the update after ``n`` updates (the kill lands between checkpoints)."""

    def __init__(self, cfg, n: int) -> None:
        super().__init__(cfg)
        self.n, self.seen = n, 0

    def after_update(self, stats):
        super().after_update(stats)
        self.seen += 1
        if self.seen == self.n:
            raise Interrupted(f"killed in update {self.n}")


def test_interrupted_hard_run_resumes_bitwise(tmp_path):
    cfg = tiny_hard()
    straight = CaptioningTask(cfg)
    a = fit(straight, tmp_path / "a", progress=False)
    assert straight.baseline is not None and straight.baseline < 0  # log p(y|s,a) < 0

    with pytest.raises(Interrupted):  # update 8: epoch 2, after the step-6 checkpoint
        fit(DiesAfter(cfg, 8), tmp_path / "b", progress=False)
    run = RunDir(tmp_path / "b")
    assert run.last.resolve().name == "step-00000006"
    resumed = CaptioningTask(cfg)
    b = fit(resumed, run.root, resume=True, progress=False)

    assert resumed.baseline == straight.baseline  # restored at step 6, then the same updates
    for name in ("model.safetensors", "checkpoints/last/model.safetensors"):  # best, final
        x, y = load_file(str(tmp_path / "a" / name)), load_file(str(run.root / name))
        assert x.keys() == y.keys()
        for key in x:
            assert torch.equal(x[key], y[key]), (name, key)
    drop = ("seconds", "train_seconds")
    rows = [[{k: v for k, v in h.items() if k not in drop} for h in r.history] for r in (a, b)]
    assert rows[0] == rows[1] and len(rows[0]) == 3
    metrics = json.loads(run.metrics.read_text())
    assert metrics["best_epoch"] == b.best_epoch and metrics["best_step"] == b.best["step"]
    assert metrics["valid_bleu"] == b.best["valid_bleu"] == b.final["valid_bleu"]
    assert metrics["history"][-1]["step"] == 15


def test_without_the_baseline_state_the_resume_differs(tmp_path, monkeypatch):
    """The check above can fail: a task that forgets its baseline on resume ends elsewhere."""
    cfg = tiny_hard()
    fit(CaptioningTask(cfg), tmp_path / "a", progress=False)
    with pytest.raises(Interrupted):
        fit(DiesAfter(cfg, 8), tmp_path / "b", progress=False)
    monkeypatch.setattr(CaptioningTask, "load_state_dict", lambda self, state: None)
    fit(CaptioningTask(cfg), tmp_path / "b", resume=True, progress=False)
    x = load_file(str(tmp_path / "a" / "checkpoints/last/model.safetensors"))
    y = load_file(str(tmp_path / "b" / "checkpoints/last/model.safetensors"))
    assert not all(torch.equal(x[k], y[k]) for k in x)


def test_select_score_is_exact_match_then_bleu():
    n = 300
    assert select_score(1 / n, 0.0, n) > select_score(0.0, 100.0, n)
    assert select_score(0.5, 40.0, n) > select_score(0.5, 39.9, n)
    assert select_score(0.0, 0.0, n) == 0.0
