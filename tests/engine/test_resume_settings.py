"""Resuming takes the training settings from the config it is given (issue 15, item 1): the NaN
stop's advice (lower the learning rate, then --resume) works; every changed setting is logged in
one line and applied at the update reached; --resume-exact refuses any difference."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from attnkit.apps.translation import training as loop
from attnkit.apps.translation.training import TranslationTask
from attnkit.config import ConfigError, read_yaml
from attnkit.engine import trainer as engine
from attnkit.engine.trainer import Trainer, TrainingDiverged


def with_train(cfg, **settings):
    return replace(cfg, train=replace(cfg.train, **settings))


def test_the_nan_advice_works(tmp_path, monkeypatch, fast_config):
    """A loss that turns NaN whenever the learning rate is above 0.005 (from update 5 on): the
    run stops there; resumed with the same config it stops there again; resumed with the
    learning rate lowered, as the message advises, it trains to the end."""
    optimisers, real_build, real_loss = [], engine.build_optimiser, loop.token_cross_entropy

    def recording(model, t):
        optimisers.append(real_build(model, t))
        return optimisers[-1]

    def too_fast(logits, *args, **kwargs):
        loss, n = real_loss(logits, *args, **kwargs)
        group = optimisers[-1].param_groups[0]
        late = optimisers[-1].state and next(iter(optimisers[-1].state.values()))["step"] >= 4
        return (loss * float("nan"), n) if late and group["lr"] > 0.005 else (loss, n)

    monkeypatch.setattr(engine, "build_optimiser", recording)
    monkeypatch.setattr(loop, "token_cross_entropy", too_fast)
    cfg, run = fast_config(checkpoint_every=1, learning_rate=0.01), tmp_path / "run"
    advice = r"update 5 \(epoch 1\): the training loss is nan; .*Lower the learning rate"
    with pytest.raises(TrainingDiverged, match=advice):
        loop.train(cfg, run, progress=False)
    with pytest.raises(TrainingDiverged, match=advice):  # the same settings: the same stop
        loop.train(cfg, run, resume=True, progress=False)
    lowered = with_train(cfg, learning_rate=0.001)
    result = loop.train(lowered, run, resume=True, progress=False)
    assert result.epochs_run == 2 and len(result.step_losses) == 16 - 4
    assert optimisers[-1].param_groups[0]["lr"] == 0.001
    assert read_yaml(run / "config.yaml")[0]["train"]["learning_rate"] == 0.001


def test_changed_settings_are_logged_and_applied(tmp_path, caplog, fast_config):
    cfg = fast_config(epochs=1, schedule="constant")
    loop.train(cfg, tmp_path / "run", progress=False)
    changed = with_train(
        cfg, epochs=3, learning_rate=0.004, betas=(0.8, 0.9), schedule="linear", warmup_steps=2
    )
    with caplog.at_level(logging.INFO, logger="attnkit.engine.resume"):
        trainer = Trainer(TranslationTask(changed), tmp_path / "run", resume=True, progress=False)
    lines = [r.getMessage() for r in caplog.records]
    assert any("train.learning_rate 0.01 -> 0.004 from the config" in line for line in lines)
    assert any("train.epochs 1 -> 3 from the config" in line for line in lines)
    assert any("train.schedule constant -> linear" in line for line in lines)
    group = trainer.optimizer.param_groups[0]
    assert group["betas"] == (0.8, 0.9)
    # linear: warm-up 2 updates, then decay to 0 over 3 epochs of 8; at update 8 of 24
    assert trainer.step == 8
    assert group["lr"] == pytest.approx(0.004 * (1 - (8 - 2) / (24 - 2)), rel=1e-6)


def test_resume_exact_refuses_any_difference(tmp_path, fast_config):
    cfg = fast_config(epochs=1)
    loop.train(cfg, tmp_path / "run", progress=False)
    with pytest.raises(ConfigError, match=r"--resume-exact.*train.learning_rate 0.01 -> 0.02"):
        Trainer(
            TranslationTask(with_train(cfg, learning_rate=0.02)),
            tmp_path / "run",
            resume="exact",
            progress=False,
        )
    same = Trainer(TranslationTask(cfg), tmp_path / "run", resume="exact", progress=False)
    assert same.optimizer.param_groups[0]["lr"] == 0.01


def test_one_resume_flag_at_a_time(tmp_path):
    from typer.testing import CliRunner

    from attnkit.cli import app

    config = tmp_path / "c.yaml"
    config.write_text("name: c\n")
    result = CliRunner().invoke(app, ["train", str(config), "--resume", "--resume-exact"])
    assert result.exit_code == 2
    assert "one of --resume, --resume-auto and --resume-exact" in result.output
