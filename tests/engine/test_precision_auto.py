"""``precision: auto`` (the default; ``bf16: auto`` is its older name): bfloat16 where the
device computes it natively and, on the CPU, measurably faster (issue 34: a probe decides),
float32 elsewhere; an explicit ``true`` on a CPU without it warns with the expected slowdown
(issue 15, item 6)."""

import logging
from dataclasses import replace

import pytest
import torch

from attnkit import precision
from attnkit.apps.translation.config import TranslationConfig, load_experiment
from attnkit.config import ConfigError
from attnkit.engine.settings import TrainSettings


@pytest.fixture(autouse=True)
def _fresh_log(monkeypatch, tmp_path):
    monkeypatch.setattr(precision, "_said", set())
    monkeypatch.setenv("ATTNKIT_CACHE_DIR", str(tmp_path / "cache"))  # no probe of other tests


def test_detection_follows_onednn_then_the_probe_on_the_cpu(monkeypatch):
    monkeypatch.delenv(precision.ENV, raising=False)
    native, why = precision.native_bf16("cpu")
    if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        assert not native and "oneDNN" in why
    else:  # decided by measuring, and the log line gives the figures
        assert "GFLOP/s" in why and native == ("bf16 faster" in why)
    monkeypatch.setenv(precision.ENV, "1")
    assert precision.native_bf16("cpu") == (True, "ATTNKIT_BF16_NATIVE=1")


@pytest.mark.parametrize("native", ["0", "1"])
def test_auto_is_on_exactly_where_native_and_says_why(monkeypatch, caplog, native):
    monkeypatch.setenv(precision.ENV, native)
    with caplog.at_level(logging.INFO, logger="attnkit.precision"):
        assert precision.resolve("auto", "cpu", field="train.bf16") is (native == "1")
    state = "on" if native == "1" else "off"
    assert f"train.bf16: auto -> {state} (ATTNKIT_BF16_NATIVE={native})" in caplog.text


def test_true_without_native_bf16_warns_with_the_slowdown(monkeypatch, caplog):
    monkeypatch.setenv(precision.ENV, "0")
    with caplog.at_level(logging.INFO, logger="attnkit.precision"):
        assert precision.resolve(True, "cpu", field="decode.bf16") is True
        assert precision.resolve(False, "cpu") is False
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "7x slower" in warnings[0].getMessage()
    monkeypatch.setenv(precision.ENV, "1")
    caplog.clear()
    assert precision.resolve(True, "cpu") is True and not caplog.records


def test_auto_is_the_default_and_other_values_are_refused(tmp_path):
    assert TrainSettings().precision == "auto" and TranslationConfig().decode.bf16 == "auto"
    with pytest.raises(ValueError, match="bf16 must be true, false or auto"):
        TrainSettings(bf16="yes")
    with pytest.raises(ValueError, match="precision must be auto, fp32, bf16 or fp16"):
        TrainSettings(precision="fp8")
    path = tmp_path / "bad.yaml"
    path.write_text("data: {}\nmodel: {}\ntrain:\n  bf16: sometimes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.yaml, line 4.*train.bf16"):
        load_experiment(path)


def _autocast_seen(cfg, run_dir):
    """Train ``cfg`` for two updates; whether the loss ran under CPU autocast."""
    from attnkit.apps.translation.training import TranslationTask
    from attnkit.engine.trainer import fit

    task, seen = TranslationTask(cfg), []
    loss = task.loss
    task.loss = lambda model, batch: (
        seen.append(torch.is_autocast_enabled("cpu")),
        loss(model, batch),
    )[1]
    fit(task, run_dir, progress=False)
    return set(seen)


@pytest.mark.parametrize("native", ["0", "1"])
def test_training_autocasts_under_auto_only_where_native(
    monkeypatch, tmp_path, tiny_config, native
):
    monkeypatch.setenv(precision.ENV, native)
    cfg = tiny_config()
    cfg = replace(cfg, train=replace(cfg.train, epochs=1, max_steps=2, valid_bleu=False))
    assert _autocast_seen(cfg, tmp_path / "run") == {native == "1"}
