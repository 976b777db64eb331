"""SIGKILL a training process at random moments, resume each time: the final weights and
optimiser state are bit for bit those of an uninterrupted run with the same seed, and every
checkpoint on disk, looked at after every kill, is complete and loads. The first kill comes
while a checkpoint is being written; the others at a random instant of a random update."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

from attnkit.apps.translation.data import Tokenizer
from attnkit.apps.translation.models.build import build_model
from attnkit.apps.translation.training import train
from attnkit.config import save_yaml
from attnkit.engine import snapshots
from attnkit.engine.checkpoint import load_model, verify
from attnkit.engine.rundir import RunDir

KILLS = int(os.environ.get("ATTNKIT_TEST_KILLS", "3"))  # more for a longer campaign (< 15)
SCRIPT = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
from attnkit.apps.translation.config import load_experiment
from attnkit.apps.translation.training import train
train(load_experiment(sys.argv[1]), sys.argv[2], resume="auto", progress=False)
"""


def kill_config(fast_config):
    """Dropout on (the RNG states must be restored), a checkpoint after every update."""
    return fast_config(checkpoint_every=1)


def _env():
    src = str(Path(__file__).parents[2] / "src")
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=f"{src}:{path}" if path else src)


def _every_checkpoint_loads(run: RunDir, cfg_model) -> int:
    """Verify and load every checkpoint file on disk; returns how many step-N there are."""
    tok = Tokenizer.load(run.root)
    model = build_model(cfg_model, tok.src_vocab_size, tok.tgt_vocab_size, tok.pad_id)
    steps = snapshots.step_dirs(run)
    for path in steps:
        verify(path)
        load_model(model, path / "model.safetensors")
    weights = [*run.checkpoints.glob("epoch*.safetensors"), run.model, run.averaged]
    for path in weights:
        if path.exists():
            load_model(model, path)
    if run.last.is_symlink():
        assert run.last.exists(), "checkpoints/last dangles"
    return len(steps)


def _newest(run: RunDir) -> int:
    """The update of the checkpoint ``last`` points at (0 before the first)."""
    try:
        return int(os.readlink(run.last).split("-")[1])
    except FileNotFoundError:
        return 0


def test_sigkill_at_random_moments_then_resume_is_bitwise_equal(tmp_path, fast_config):
    cfg = kill_config(fast_config)
    save_yaml(cfg, tmp_path / "cfg.yaml")
    straight = train(cfg, tmp_path / "straight", progress=False)
    total = len(straight.step_losses)  # updates
    run = RunDir(tmp_path / "killed")
    rng = random.Random(6)
    # kill i comes during the update after checkpoint targets[i], at a random instant of it
    targets = sorted(rng.sample(range(total - 2), KILLS))
    per_update = straight.seconds / total  # the epochs' time, validation included
    kills, launches = 0, 0
    while True:
        launches += 1
        proc = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(tmp_path / "cfg.yaml"), str(run.root)],
            env=_env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        if kills == KILLS:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
            break
        for line in proc.stderr:  # wait until it trains (after imports and set-up)
            if line.startswith("model:"):
                break
        if kills == 0:  # the first kill lands inside a checkpoint write
            while not list(run.checkpoints.glob(".tmp-step-*")) and proc.poll() is None:
                time.sleep(0.001)
        else:
            while _newest(run) < targets[kills] and proc.poll() is None:
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, per_update))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, err[-3000:]
        n = _every_checkpoint_loads(run, cfg.model)
        left = len(list(run.checkpoints.glob(".tmp-*")))  # removed by the next run
        print(f"kill {kills}: {n} checkpoints load, newest update {_newest(run)}, {left} temp dirs")
        assert launches <= KILLS, "a run ended before it was killed"
    assert kills == KILLS
    assert _every_checkpoint_loads(run, cfg.model) >= 1
    assert not list(run.checkpoints.glob(".tmp-*"))
    a, b = RunDir(tmp_path / "straight").last, run.last
    assert verify(a)["step"] == verify(b)["step"] == len(straight.step_losses)
    for name in ("model.safetensors", "trainer.safetensors"):
        x, y = load_file(str(a / name)), load_file(str(b / name))
        assert x.keys() == y.keys()
        for key in x:
            assert torch.equal(x[key], y[key]), (name, key)
    x, y = load_file(str(a.parent.parent / "model.safetensors")), load_file(str(run.model))
    assert all(torch.equal(x[k], y[k]) for k in x)
