"""SIGKILL a ViT training process after a step checkpoint, resume it: the final model is bit
for bit that of an uninterrupted run (shuffling, augmentation and dropout included), since an
epoch's batches and their augmentation are a pure function of (seed, epoch) and the engine
restores the RNG states and the position inside the epoch."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

from attnkit.apps.vision.app import APP

CONFIG = """\
name: kill
task: image-classification
data:
  source: digits
model:
  patch_size: 4
  d_model: 16
  num_heads: 2
  num_layers: 1
  d_ff: 32
  dropout: 0.1
train:
  epochs: 3
  batch_size: 64
  label_smoothing: 0.1
  max_shift: 1
  max_rotation: 10.0
  max_scale: 0.1
  checkpoint_every: 2
  threads: 1
  seed: 5
"""
UPDATES = 3 * 23  # 1,437 training digits in batches of 64


def _env():
    src = str(Path(__file__).parents[3] / "src")
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=f"{src}:{path}" if path else src)


def _newest(run: Path) -> int:
    """The update of the checkpoint ``checkpoints/last`` points at (0 before the first)."""
    try:
        return int(os.readlink(run / "checkpoints" / "last").split("-")[1])
    except FileNotFoundError:
        return 0


def test_sigkill_after_a_step_checkpoint_then_resume_is_bitwise_equal(tmp_path):
    config = tmp_path / "kill.yaml"
    config.write_text(CONFIG)
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    APP.train(APP.load_config(config), straight)
    command = [sys.executable, "-m", "attnkit", "train", str(config), "-o", str(killed)]
    proc = subprocess.Popen(command, env=_env(), stderr=subprocess.PIPE, text=True)
    while _newest(killed) == 0 and proc.poll() is None:  # a step checkpoint exists
        time.sleep(0.002)
    time.sleep(random.Random().uniform(0.0, 0.1))  # then a random instant of the run
    assert proc.poll() is None, "the run ended before it was killed: " + proc.stderr.read()[-2000:]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    at = _newest(killed)
    assert 0 < at < UPDATES, at  # killed mid-run, with a checkpoint to resume from
    print(f"killed after the checkpoint of update {at} of {UPDATES}")
    APP.train(APP.load_config(config), killed, resume=True)
    a, b = (
        load_file(str(straight / "model.safetensors")),
        load_file(str(killed / "model.safetensors")),
    )
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    ma, mb = (json.loads((run / "metrics.json").read_text()) for run in (straight, killed))
    assert [h["train_loss"] for h in ma["history"]] == [h["train_loss"] for h in mb["history"]]
    assert ma["test_accuracy"] == mb["test_accuracy"] and mb["history"][-1]["step"] == UPDATES
    # the model is the last epoch's weights (no validation split picks another)
    last = load_file(str(killed / "checkpoints" / "last" / "model.safetensors"))
    assert all(torch.equal(last[key], b[key]) for key in b)
