"""Two processes on the CPU with torchrun and gloo: DDP keeps the ranks identical, matches a
single process that accumulates the same global batch, and survives a killed worker under
``torchrun --max-restarts``."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from attnkit.apps.translation.training import train
from attnkit.config import save_yaml

WORKER = Path(__file__).with_name("ddp_worker.py")
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]


def ddp_config(fast_config):
    """No dropout (dropout draws differ between 2 ranks and 1 process); validation by loss."""
    cfg = fast_config(epochs=1, checkpoint_every=2)
    return replace(cfg, model=replace(cfg.model, dropout=0.0))


def _env():
    src = str(Path(__file__).parents[2] / "src")
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=f"{src}:{path}" if path else src)


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory, fast_config):
    """One uninterrupted 2-process run: (config path, run dir, output dir)."""
    root = tmp_path_factory.mktemp("ddp")
    save_yaml(ddp_config(fast_config), root / "cfg.yaml")
    cmd = [*TORCHRUN, str(WORKER), str(root / "cfg.yaml"), str(root / "run"), str(root)]
    done = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "cfg.yaml", root / "run", root


def test_both_ranks_end_with_identical_parameters(ddp_run):
    _, run, out = ddp_run
    info = [json.loads((out / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [i["world"] for i in info] == [2, 2] and info[0]["backend"] == "gloo"
    a, b = load_file(str(out / "rank0.safetensors")), load_file(str(out / "rank1.safetensors"))
    start = load_file(str(run / "checkpoints" / "last" / "model.safetensors"))
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name  # bit for bit
        assert torch.equal(a[name], start[name]), name  # rank 0 wrote what it holds
    assert info[0]["losses"] == info[1]["losses"]  # the all-reduced loss of every update


def test_loss_curve_matches_one_process_with_the_same_global_batch(ddp_run, tmp_path, fast_config):
    """2 ranks x 1 batch per update == 1 process x 2 accumulated batches (update_freq=2)."""
    _, run, out = ddp_run
    ddp = json.loads((out / "rank0.json").read_text())["losses"]
    cfg = ddp_config(fast_config)
    single = train(
        replace(cfg, train=replace(cfg.train, update_freq=2)), tmp_path / "one", progress=False
    )
    assert len(ddp) == len(single.step_losses) >= 4
    gap = max(abs(a - b) / b for a, b in zip(ddp, single.step_losses, strict=True))
    print(f"{len(ddp)} updates, largest relative loss difference {gap:.2e}")
    # tolerance: the same sums in another order (float32), compounded over the updates
    torch.testing.assert_close(
        torch.tensor(ddp), torch.tensor(single.step_losses), rtol=1e-4, atol=0
    )
    plain = train(cfg, tmp_path / "plain", progress=False)  # per-process batches: another curve
    assert len(plain.step_losses) > len(ddp)
    a = load_file(str(out / "rank0.safetensors"))
    b = load_file(str(tmp_path / "one" / "checkpoints" / "last" / "model.safetensors"))
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-3, atol=1e-4)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["history"][0]["steps"] == len(ddp)


def _workers(agent: int) -> list[int]:
    children = Path(f"/proc/{agent}/task/{agent}/children").read_text().split()
    return [int(c) for c in children]


@pytest.mark.slow  # another 2-process torchrun job started twice: about 60 s on 2 busy cores
@pytest.mark.slow
def test_torchrun_max_restarts_resumes_a_killed_worker_exactly(ddp_run, tmp_path):
    """SIGKILL one worker after the first checkpoint: torchrun restarts both, they resume from
    the checkpoint, and the result is bit for bit the uninterrupted run's.

    In ``make slow``, not ``make test``: on this 2-core machine the restarted workers often
    fail to connect to each other inside torch (Gloo ``connectFullMesh``: "Connection refused",
    the race of pytorch/pytorch#167288), before any attnkit code runs; it failed 2 of 4 runs
    at commit 8dc1585 and in 2 of 4 with ``--max-restarts=3``."""
    config, _, out = ddp_run
    run = tmp_path / "run"
    cmd = [*TORCHRUN, "--max-restarts=1", "-m", "attnkit", "train", str(config), "-o", str(run)]
    agent = subprocess.Popen(
        cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.time() + 240
    while not list((run / "checkpoints").glob("step-*")) and time.time() < deadline:
        assert agent.poll() is None, agent.stdout.read()[-3000:]
        time.sleep(0.05)
    victims = _workers(agent.pid)
    assert len(victims) == 2
    os.kill(victims[-1], signal.SIGKILL)
    output, _ = agent.communicate(timeout=240)
    assert agent.returncode == 0, output[-3000:]
    log = (run / "train.log").read_text()
    assert "resuming" in log and "update_freq 1" in log, log[-2000:]
    want = load_file(str(out / "rank0.safetensors"))
    got = load_file(str(run / "checkpoints" / "last" / "model.safetensors"))
    for name in want:
        assert torch.equal(want[name], got[name]), name
