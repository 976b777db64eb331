"""``train.precision`` (issue 34): the older ``bf16`` setting read as its alias, the CPU probe
deciding ``auto`` by what it measured (and cached per machine), CUDA's auto (bf16, else fp16
with a gradient scaler; CUDA mocked for the decision only), and fp16 training on the CPU with
the scaler's state checkpointed, so that resume stays bit for bit."""

import json
import logging
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

from attnkit import cpu_probe, precision
from attnkit.apps.translation.config import load_experiment
from attnkit.config import ConfigError
from attnkit.engine.settings import TrainSettings


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(precision, "_said", set())
    monkeypatch.setenv("ATTNKIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize(("bf16", "expected"), [(True, "bf16"), (False, "fp32"), ("auto", "auto")])
def test_bf16_is_read_as_precision(bf16, expected):
    settings = TrainSettings(bf16=bf16)
    assert settings.precision == expected and settings.bf16 is None


def test_bf16_and_precision_that_disagree_are_refused_at_their_line(tmp_path):
    with pytest.raises(ValueError, match="bf16 true and precision fp16 disagree"):
        TrainSettings(bf16=True, precision="fp16")
    path = tmp_path / "both.yaml"
    text = "data: {}\nmodel: {}\ntrain:\n  precision: fp32\n  bf16: true\n"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"both.yaml, line 5: train.bf16 true and precision"):
        load_experiment(path)


def test_the_probe_decides_by_its_own_measurement(monkeypatch):
    found = cpu_probe.measure(n=256, repeats=3)
    faster = found["bf16_gflops"] >= cpu_probe.FASTER * found["fp32_gflops"]
    assert found["bf16_faster"] is faster and found["fp32_gflops"] > 0
    rates = {torch.float32: 100.0, torch.bfloat16: 105.0}  # 5% faster: not enough
    monkeypatch.setattr(cpu_probe, "_rate", lambda dtype, n, repeats: rates[dtype])
    assert cpu_probe.measure()["bf16_faster"] is False
    rates[torch.bfloat16] = 400.0
    assert cpu_probe.measure()["bf16_faster"] is True


def test_the_probe_runs_once_per_machine_and_auto_follows_it(monkeypatch, caplog, tmp_path):
    monkeypatch.delenv(precision.ENV, raising=False)
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    rates = {torch.float32: 161.0, torch.bfloat16: 83.0}  # the Xeon of issue 34
    monkeypatch.setattr(cpu_probe, "_rate", lambda dtype, n, repeats: rates[dtype])
    with caplog.at_level(logging.INFO, logger="attnkit.precision"):
        chosen = precision.choose("auto", "cpu", field="train.precision")
    assert chosen.name == "fp32"
    assert "bf16 83 against fp32 161 GFLOP/s" in caplog.text and "not faster" in caplog.text
    cached = json.loads((tmp_path / "cache" / "precision.json").read_text(encoding="utf-8"))
    assert list(cached) == [cpu_probe.machine_key()]
    rates[torch.bfloat16] = 900.0  # the cache answers: no second measurement
    assert precision.choose("auto", "cpu").name == "fp32"
    assert cpu_probe.probe()[1] is False
    (tmp_path / "cache" / "precision.json").unlink()
    assert precision.choose("auto", "cpu").name == "bf16"


@pytest.mark.parametrize(("bf16_ok", "expected"), [(True, "bf16"), (False, "fp16")])
def test_cuda_auto_is_bf16_where_supported_else_fp16(monkeypatch, bf16_ok, expected):
    monkeypatch.delenv(precision.ENV, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16_ok)
    chosen = precision.choose("auto", "cuda")
    assert chosen.name == expected and chosen.scaled is (expected == "fp16")


def test_fp32_and_an_unknown_precision():
    assert precision.choose("fp32", "cpu").scaler("cpu") is None
    with pytest.raises(ValueError, match="train.precision must be auto, fp32, bf16 or fp16"):
        precision.choose("half", "cpu", field="train.precision")


def test_fp16_is_refused_in_one_line_where_autocast_cannot(monkeypatch):
    def refuse(*args, **kwargs):
        raise RuntimeError("In CPU autocast, but the target dtype is not supported")

    monkeypatch.setattr(torch, "autocast", refuse)
    with pytest.raises(ValueError, match="train.precision: fp16, but torch cannot autocast"):
        precision.choose("fp16", "cpu", field="train.precision")


def test_fp16_trains_on_the_cpu_and_resumes_bit_for_bit(tmp_path, fast_config):
    from attnkit.apps.translation.training import TranslationTask
    from attnkit.engine.trainer import fit

    cfg = fast_config(precision="fp16", epochs=2)
    seen = []
    task = TranslationTask(cfg)
    loss = task.loss
    task.loss = lambda model, batch: (seen.append(torch.get_autocast_dtype("cpu")),
                                      loss(model, batch))[1]  # fmt: skip
    fit(task, tmp_path / "whole", progress=False)
    assert set(seen) == {torch.float16}
    half = replace(cfg, train=replace(cfg.train, epochs=1))
    fit(TranslationTask(half), tmp_path / "cut", progress=False)
    fit(TranslationTask(cfg), tmp_path / "cut", resume=True, progress=False)
    last = [tmp_path / run / "checkpoints" / "last" for run in ("whole", "cut")]
    whole, cut = (load_file(p / "model.safetensors") for p in last)
    assert all(torch.equal(whole[k], cut[k]) for k in whole)
    scalers = [json.loads((p / "trainer.json").read_text())["extra"]["scaler"] for p in last]
    assert scalers[0] == scalers[1] and scalers[0]["scale"] > 0  # the loss scale resumed
    assert scalers[0]["_growth_tracker"] > 0  # ... and its count of steps without overflow
