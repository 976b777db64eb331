"""On a CUDA device (issue 34): every task trains on ``--device cuda``, resumes bit for bit
there after a SIGKILL, and its run predicts from ``attnkit.load_run(path, device="cuda")``;
fp16 (with the gradient scaler) and bf16 train; ``auto`` picks the GPU and its precision;
greedy decoding on the GPU gives the CPU's translations.

Marked ``gpu``: skipped, saying why, on a machine without CUDA (CI has none); run by
``tools/gpu_check.sh`` on one that has it. ``ATTNKIT_GPU_TESTS_ON=cpu`` runs the same tests on
the CPU (a dry run of the tests themselves before a GPU is lent).
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from dataclasses import replace

import pytest
import torch
import yaml
from tests.test_kill_resume_every_task import CONFIGS, _checkpoints, _train, resume_and_compare
from tests.test_load_run_every_task import CHECKS

import attnkit
from attnkit import devices, precision
from attnkit.apps import app_named

DEVICE = os.environ.get("ATTNKIT_GPU_TESTS_ON", "cuda")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        DEVICE == "cuda" and not torch.cuda.is_available(),
        reason="no CUDA device here: the gpu tests run on a GPU machine (tools/gpu_check.sh)",
    ),
]


def _device_set(task: str) -> list[str]:
    """--set options: deterministic kernels where the task has a train: section."""
    app = app_named(CONFIGS[task].get("task", "translation"))
    section = app.device_field.split(".")[0]
    return ["--set", f"{section}.deterministic=true"] if section == "train" else []


def _config(task: str, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**CONFIGS[task], "name": "gpu"}), encoding="utf-8")
    return path


@pytest.mark.parametrize("task", sorted(CONFIGS))
def test_trains_on_cuda_and_predicts_from_load_run(task, tmp_path):
    app = app_named(CONFIGS[task].get("task", "translation"))
    overrides = [f"{app.device_field}={DEVICE}"]
    run = attnkit.train(_config(task, tmp_path), tmp_path / "run", overrides=overrides)
    if task != "anomaly-detection":  # one metrics.json per series there
        metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
        assert metrics["device"].startswith(DEVICE), metrics["device"]
    opened = attnkit.load_run(tmp_path / "run", device=DEVICE)
    model = getattr(opened, "model", None)
    if isinstance(model, torch.nn.Module):
        assert devices.of(model).type == DEVICE
    CHECKS[task](opened)
    assert run is not None


@pytest.mark.parametrize("task", sorted(CONFIGS))
def test_sigkill_then_resume_on_cuda_is_bitwise_equal(task, tmp_path):
    config, extra = _config(task, tmp_path), ["--device", DEVICE, *_device_set(task)]
    straight = _train(config, tmp_path / "straight", *extra)
    err = straight.communicate(timeout=300)[1]
    assert straight.returncode == 0, err[-2000:]
    killed = tmp_path / "killed"
    proc = _train(config, killed, *extra)
    while not _checkpoints(killed) and proc.poll() is None:
        time.sleep(0.002)
    time.sleep(random.Random().uniform(0.0, 0.02))
    if proc.poll() is not None:
        pytest.skip(f"{task}: the run ended before the kill (too fast on this GPU)")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    resume_and_compare(task, config, tmp_path / "straight", killed, *extra)


@pytest.mark.skipif(DEVICE != "cuda", reason="auto picks a GPU only where there is one")
def test_auto_picks_the_gpu_and_its_precision(monkeypatch):
    monkeypatch.delenv(precision.ENV, raising=False)
    assert devices.pick("auto").type == "cuda"
    want = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    assert precision.choose("auto", "cuda").name == want


@pytest.mark.parametrize("name", ["fp16", "bf16"])
def test_fp16_and_bf16_train_on_cuda(name, tmp_path, fast_config):
    from attnkit.apps.translation.training import TranslationTask
    from attnkit.engine.trainer import Trainer

    cfg = fast_config(precision=name, device=DEVICE, epochs=1, max_steps=3, threads=None)
    task, seen = TranslationTask(cfg), []
    loss = task.loss
    task.loss = lambda model, batch: (seen.append(torch.get_autocast_dtype(DEVICE)),
                                      loss(model, batch))[1]  # fmt: skip
    trainer = Trainer(task, tmp_path / name, progress=False)
    result = trainer.fit()
    assert set(seen) == {precision.DTYPES[name]} and result.device.startswith(DEVICE)
    assert (trainer.scaler is not None) is (name == "fp16")
    assert all(torch.isfinite(p).all() for p in trainer.model.parameters())


def test_greedy_decoding_on_cuda_gives_the_cpu_translations(trained_run):
    run_dir, _ = trained_run
    on_cpu = attnkit.load_run(run_dir, device="cpu")
    on_gpu = attnkit.load_run(run_dir, device=DEVICE)
    texts = [p.src for p in _valid_pairs(on_cpu)][:20]
    a = on_cpu.translate(texts, beam=1)
    b = on_gpu.translate(texts, beam=3, attention=True)
    c = on_gpu.translate(texts, beam=1)
    same = sum(x.text == y.text for x, y in zip(a, c, strict=True))
    assert same >= 0.9 * len(texts), f"{same} of {len(texts)} greedy translations agree"
    assert all(t.attention[0]["cross"].device.type == "cpu" for t in b)


def _valid_pairs(run):
    from attnkit.apps.translation.prepare import load_configured_corpus

    return load_configured_corpus(replace(run.config.data)).splits["valid"]
