"""attnkit's GPT against nanoGPT on nanoGPT's CPU recipe (issue 37): the same Tiny Shakespeare
split, sizes and schedule (4 layers, 4 heads, 128 wide, context 64, batch 12, 2,000 updates,
no dropout), each trained as its own program on one thread, in interleaved rounds (the order
rotated each round), so both meet the same load.

    python benchmarks/gpt_nanogpt.py --rounds 3 --out benchmarks/results/gpt-nanogpt-cpu.json

Reported per round: milliseconds per update without evaluation (nanoGPT: the median of its
logged per-iteration times, evaluation iterations left out; attnkit: each epoch's training
seconds over its updates, ``train_seconds`` in ``metrics.json``), the validation loss after
the last update (nats per character; each estimates it on its own random validation blocks,
20 batches of 12), the loss of each kept model on the same blocks, all 1,742 of 64 characters
of the validation text (nanoGPT's scored by its own ``model.py``), and the wall time.
Targets: val loss <= 1.88 and time per update at most nanoGPT's (ratio nanoGPT/attnkit >=
1.0). nanoGPT comes from ``../shared/peers/nanogpt`` (unmodified,
run by its own ``run_nanogpt.sh``); ``--iters`` shortens both runs for a smoke test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script, too
from benchmarks.suites.report import Comparison, Report, Result, script_command  # noqa: E402

RECIPE = [
    "--device=cpu", "--compile=False", "--eval_iters=20", "--log_interval=1", "--block_size=64",
    "--batch_size=12", "--n_layer=4", "--n_head=4", "--n_embd=128", "--dropout=0.0",
]  # fmt: skip
ITER = re.compile(r"^iter (\d+): loss [\d.]+, time ([\d.]+)ms")
VAL = re.compile(r"^step (\d+): train loss [\d.]+, val loss ([\d.]+)")


# nanoGPT's own model.py scores its kept checkpoint on every 64-character block of its val.bin
# (run in its work folder, as a separate program)
NANOGPT_FULL_VALID = """
import numpy as np, torch
from model import GPT, GPTConfig
ck = torch.load("out-shakespeare-char/ckpt.pt", map_location="cpu", weights_only=False)
model = GPT(GPTConfig(**ck["model_args"]))
model.load_state_dict({k.removeprefix("_orig_mod."): v for k, v in ck["model"].items()})
model.eval()
val = np.fromfile("data/shakespeare_char/val.bin", dtype=np.uint16)
val = torch.from_numpy(val.astype(np.int64))
n = (len(val) - 1) // 64
rows = torch.stack([val[j * 64 : j * 64 + 65] for j in range(n)])
total = 0.0
with torch.no_grad():
    for i in range(0, n, 256):
        x, y = rows[i : i + 256, :64].contiguous(), rows[i : i + 256, 1:].contiguous()
        total += model(x, y)[1].item() * len(x)
print(ck["iter_num"], total / n)
"""


def full_valid_attnkit(run: Path) -> float:
    """attnkit's kept model on every 64-character block of the validation text (the same
    blocks as :data:`NANOGPT_FULL_VALID`)."""
    import torch

    import attnkit
    from attnkit.apps.gpt.data import read_corpus

    gpt = attnkit.load_run(run, device="cpu")
    val = read_corpus(gpt.config.data, gpt.vocab).valid
    n = (len(val) - 1) // 64
    rows = torch.stack([val[j * 64 : j * 64 + 65] for j in range(n)])  # (n, 65)
    total = 0.0
    with torch.no_grad():
        for i in range(0, n, 256):
            x, y = rows[i : i + 256, :64], rows[i : i + 256, 1:]  # (b, 64) each
            logits = gpt.model(x).logits  # (b, 64, V)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
            total += float(loss) * len(x)
    return total / n


def full_valid_nanogpt(work: Path) -> tuple[int, float]:
    """nanoGPT's kept checkpoint (its iteration) on the same blocks, by its own model.py."""
    out = subprocess.run(
        [sys.executable, "-c", NANOGPT_FULL_VALID],
        cwd=work,
        capture_output=True,
        text=True,
        env=_env(1),
    )
    if out.returncode:
        raise RuntimeError(f"nanoGPT scoring failed: {out.stderr[-1500:]}")
    iteration, loss = out.stdout.splitlines()[-1].split()  # after its own prints
    return int(iteration), float(loss)


def _env(threads: int) -> dict:
    return dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")


def run_nanogpt(shared: Path, iters: int, threads: int, work: Path) -> dict:
    """One nanoGPT training; its ms per update (evaluation iterations left out), final val
    loss and wall seconds."""
    script = shared / "peers" / "nanogpt" / "run_nanogpt.sh"
    args = [*RECIPE, f"--max_iters={iters}", f"--lr_decay_iters={iters}"]
    env = _env(threads) | {"PYTHON": sys.executable, "SHARED_DATA": str(shared / "data")}
    start = time.perf_counter()
    out = subprocess.run(
        ["bash", str(script), str(work), *args], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"nanoGPT failed: {out.stderr[-2000:]}")
    lines = out.stdout.splitlines()
    times = [float(m[2]) for m in map(ITER.match, lines) if m and int(m[1]) % 250 and int(m[1])]
    vals = [(int(m[1]), float(m[2])) for m in map(VAL.match, lines) if m]
    kept, full = full_valid_nanogpt(work)
    return {
        "ms_per_update": statistics.median(times),
        "val_loss": vals[-1][1],
        "full_valid_loss": full,
        "kept_iteration": kept,
        "wall_s": wall,
    }


def run_attnkit(iters: int, threads: int, work: Path) -> dict:
    """One attnkit training of configs/shakespeare-gpt-cpu.yaml (as many updates)."""
    epochs, interval = max(1, iters // 250), min(250, iters)
    command = [
        sys.executable, "-m", "attnkit", "train", str(ROOT / "configs/shakespeare-gpt-cpu.yaml"),
        "-o", str(work), "--set", f"train.epochs={epochs}", "--set",
        f"train.eval_interval={interval}", "--set", f"train.threads={threads}",
        "--set", "train.precision=fp32", "--set", "train.tensorboard=false",
    ]  # fmt: skip
    start = time.perf_counter()
    out = subprocess.run(command, env=_env(threads), capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"attnkit failed: {out.stderr[-2000:]}")
    history = json.loads((work / "metrics.json").read_text())["history"]
    per_epoch = [1000 * h["train_seconds"] / h["steps"] for h in history]
    return {
        "ms_per_update": statistics.median(per_epoch),
        "val_loss": history[-1]["valid_loss"],
        "full_valid_loss": full_valid_attnkit(work),
        "wall_s": wall,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    report = Report("gpt-nanogpt", script_command("benchmarks/gpt_nanogpt.py", argv), vars(args))
    runs: dict[str, list[dict]] = {"attnkit GPT": [], "nanoGPT": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = list(runs) if r % 2 == 0 else list(reversed(runs))
            for name in order:
                work = Path(tmp) / f"{name.split()[0]}-{r}"
                if name == "nanoGPT":
                    got = run_nanogpt(args.shared, args.iters, args.threads, work)
                else:
                    got = run_attnkit(args.iters, args.threads, work)
                runs[name].append(got)
                print(f"round {r + 1} {name}: {got}", flush=True)
    _report(report, runs, args)


def _report(report: Report, runs: dict, args) -> None:
    case = f"nanoGPT CPU recipe, {args.iters} updates, {args.threads} thread(s)"
    for name, got in runs.items():
        seconds = [g["ms_per_update"] / 1000 for g in got]
        keys = ("val_loss", "full_valid_loss", "wall_s")
        metrics = {k: statistics.median(g[k] for g in got) for k in keys}
        metrics["val_losses"] = [g["val_loss"] for g in got]
        metrics["full_valid_losses"] = [g["full_valid_loss"] for g in got]
        report.results.append(Result(case, name, {"iters": args.iters}, seconds, metrics))
        print(f"{name}: {1000 * statistics.median(seconds):.1f} ms/update, {metrics}")
    ratios = [
        n["ms_per_update"] / a["ms_per_update"]
        for a, n in zip(runs["attnkit GPT"], runs["nanoGPT"], strict=True)
    ]
    met = statistics.median(ratios) >= 1.0
    kind = "time per update nanoGPT/attnkit (higher is better)"
    report.comparisons.append(
        Comparison(case, "attnkit GPT", "nanoGPT", ratios, kind, ">= 1.0", met)
    )
    print(f"nanoGPT/attnkit time per update: {statistics.median(ratios):.3f} (rounds {ratios})")
    if args.out is not None:
        report.write(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
