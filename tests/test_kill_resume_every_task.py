"""One engine, every task: `attnkit train` SIGKILLed at a random moment after its first step
checkpoint, then `attnkit train --resume`, ends with weights bit for bit those of an
uninterrupted run of the same config (dropout, shuffling, augmentation and sampling included).
Each application's own test goes deeper (tests/*/test_*_engine_resume.py); this one checks the
same promise through the command line for all of them alike."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

SRC = str(Path(__file__).resolve().parents[1] / "src")
CONFIGS = {  # tiny, with dropout on and a step checkpoint after every update
    "translation": {
        "name": "kill", "data": {"generated_sizes": [300, 20, 20], "vocab_size": 200,
                                 "max_len": 60},
        "model": {"embed_dim": 16, "hidden_dim": 32, "dropout": 0.2},
        "train": {"epochs": 2, "max_tokens": 1500, "valid_bleu": False, "checkpoint_every": 1},
    },
    "text-classification": {
        "name": "kill", "task": "text-classification",
        "data": {"source": "rationales", "generated_sizes": [200, 40, 0], "seed": 5,
                 "max_len": 24},
        "model": {"kind": "rnn", "embed_dim": 16, "hidden_dim": 16, "attention_dim": 16},
        "train": {"epochs": 2, "batch_size": 16, "checkpoint_every": 1},
    },
    "image-classification": {
        "name": "kill", "task": "image-classification", "data": {"source": "digits"},
        "model": {"patch_size": 4, "d_model": 16, "num_heads": 2, "num_layers": 1, "d_ff": 32,
                  "dropout": 0.1},
        "train": {"epochs": 2, "batch_size": 64, "max_shift": 1, "max_rotation": 10.0,
                  "checkpoint_every": 1},
    },
    "captioning": {
        "name": "kill", "task": "captioning",
        "data": {"canvas": 16, "n_train": 40, "n_valid": 6, "n_test": 2, "max_objects": 2,
                 "min_size": 5, "max_size": 7},
        "model": {"attention": "hard", "canvas": 16, "grid": 4, "d_feature": 8, "d_embed": 8,
                  "d_hidden": 16, "d_attention": 8, "hard_expectation": 0.5, "dropout": 0.1},
        "train": {"epochs": 3, "updates_per_epoch": 8, "batch_size": 8, "max_len": 9,
                  "checkpoint_every": 1, "warmup_steps": 3},
    },
    "anomaly-detection": {
        "name": "kill", "task": "anomaly-detection",
        "data": {"source": "solar", "series": 3, "days": 16, "steps_per_day": 12,
                 "clean_days": 5},
        "detector": {"model": "vrae", "window": 8, "hidden": 4, "latent": 2, "steps": 40,
                     "batch_size": 8, "train_fraction": 0.3, "checkpoint_every": 1},
    },
    "segmentation": {
        "name": "kill", "task": "segmentation",
        "data": {"source": "shapes", "sizes": [64, 4, 4], "size": 32},
        "model": {"channels": [4, 8], "deep_supervision": True},
        "train": {"epochs": 2, "batch_size": 4, "checkpoint_every": 1},
    },
    "stocks": {
        "name": "kill", "task": "stocks",
        "data": {"source": "generated", "days": 300, "window": 5, "horizon": 2},
        "model": {"kind": "alpha_t_rim", "cells": 4, "active": 2, "units": 4},
        "train": {"epochs": 2, "batch_size": 16, "checkpoint_every": 2, "arima": False},
    },
    "im2latex": {
        "name": "kill", "task": "im2latex",
        "data": {"generated": [48, 4, 4], "max_tokens": 12, "max_height": 64, "max_width": 256},
        "model": {"channels": [4, 8], "pools": [[2, 2], [2, 2]], "d_row": 6, "d_embed": 8,
                  "d_hidden": 16, "d_attention": 8, "dropout": 0.1},
        "train": {"epochs": 2, "batch_size": 8, "checkpoint_every": 1, "max_len": 16,
                  "warmup_steps": 3},
    },
    "language-model": {
        "name": "kill", "task": "language-model", "data": {"block_size": 16},
        "model": {"layers": 1, "heads": 2, "width": 16, "dropout": 0.1},
        "train": {"epochs": 2, "eval_interval": 6, "eval_iters": 2, "batch_size": 4,
                  "warmup_steps": 3, "checkpoint_every": 1},
    },
    "speech": {
        "name": "kill", "task": "speech", "data": {"counts": [24, 4, 4], "spec_augment": True},
        "model": {"d_listener": 8, "pyramid": 2, "d_embed": 8, "d_decoder": 16,
                  "d_attention": 8, "conv_channels": 2, "conv_width": 3, "dropout": 0.1,
                  "ctc_weight": 0.3},
        "train": {"epochs": 2, "batch_size": 8, "beam": 2, "max_len": 10, "warmup_steps": 3,
                  "checkpoint_every": 1},
    },
    "recommendation": {
        "name": "kill", "task": "recommendation",
        "data": {"limit": 60, "negatives": 20, "valid_users": 20, "eval_users": 20},
        "model": {"max_len": 8, "d_model": 8, "n_blocks": 1, "heads": 2, "dropout": 0.1},
        "train": {"epochs": 2, "batch_size": 8, "checkpoint_every": 1},
    },
    "summarization": {
        "name": "kill", "task": "summarization",
        "data": {"limit": 24, "max_source": 60, "max_target": 12, "min_count": 1},
        "model": {"embed_dim": 8, "hidden_dim": 8, "attention_dim": 8},
        "train": {"epochs": 2, "batch_size": 8, "beam": 2, "max_len": 8, "valid_papers": 4,
                  "checkpoint_every": 1},
    },
}  # fmt: skip


def _env() -> dict:
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=f"{SRC}:{path}" if path else SRC)


def _train(config: Path, run: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "attnkit", "train", str(config), "-o", str(run), *extra]
    return subprocess.Popen(command, env=_env(), stderr=subprocess.PIPE, text=True)


def _weights(run: Path) -> dict[str, torch.Tensor]:
    """Every weight file of the run's final models (per series for anomaly detection)."""
    files = sorted(run.glob("model.safetensors")) + sorted(run.glob("series/*/model.safetensors"))
    assert files, f"no model in {run}"
    return {f"{f.relative_to(run)}:{k}": v for f in files for k, v in load_file(str(f)).items()}


def _checkpoints(run: Path) -> list[Path]:
    return [*run.glob("checkpoints/step-*"), *run.glob("series/*/checkpoints/step-*")]


@pytest.mark.parametrize("task", sorted(CONFIGS))
def test_sigkill_at_a_random_moment_then_resume_is_bitwise_equal(task, tmp_path):
    config = tmp_path / "kill.yaml"
    config.write_text(yaml.safe_dump(CONFIGS[task]), encoding="utf-8")
    straight = _train(config, tmp_path / "straight")
    err = straight.communicate(timeout=300)[1]
    assert straight.returncode == 0, err[-2000:]
    killed = tmp_path / "killed"
    proc = _train(config, killed)
    while not _checkpoints(killed) and proc.poll() is None:
        time.sleep(0.002)
    time.sleep(random.Random().uniform(0.0, 0.05))  # a random instant after the first checkpoint
    if proc.poll() is not None:
        pytest.fail(f"{task}: the run ended before the kill: {proc.stderr.read()[-2000:]}")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    resume_and_compare(task, config, tmp_path / "straight", killed)


def resume_and_compare(task: str, config: Path, straight: Path, killed: Path, *extra: str):
    """``attnkit train --resume`` the killed run, then its weights equal the straight run's."""
    resumed = _train(config, killed, *extra, "--resume")
    err = resumed.communicate(timeout=300)[1]
    assert resumed.returncode == 0, err[-2000:]
    want, got = _weights(straight), _weights(killed)
    assert want.keys() == got.keys()
    for name in want:
        assert torch.equal(want[name], got[name]), f"{task}: {name} differs after the resume"
