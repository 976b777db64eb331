"""How much a segmentation run's validation Dice swings from epoch to epoch (issue 35).

Reads RUN/metrics.json of every run under each RUNS folder that
``benchmarks/segmentation_compare.py`` trained (``u-net-seedN``, ``attention-u-net-seedN``)
and measures, over the last half and the last quarter of the epochs (of 30: 16-30, 24-30):
the standard deviation of the validation Dice, the mean absolute change from one epoch to the
next, the largest one-epoch drop and the lowest value; over all epochs, the best value, its
epoch and the last value.

    python benchmarks/segmentation_swings.py /tmp/seg-shapes-100 \\
        --out benchmarks/results/segmentation-shapes-100-swings.json

``--batchnorm``: where the swings come from. Trains one run as the engine does at a constant
rate (Adam with the config's rate, no clipping, the batches of ``SegmentationTask``) and per epoch
scores the validation set twice: in eval mode, with BatchNorm's running statistics, as the
engine does; and with the same weights after those statistics are recomputed over the
training images (a cumulative average, no augmentation).

    python benchmarks/segmentation_swings.py --batchnorm --set model.gates=true train.seed=1 \\
        "data.sizes=[100, 50, 100]" train.threads=1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.report import Report, Result, script_command  # noqa: E402

MODELS = {"U-Net": "u-net", "Attention U-Net": "attention-u-net"}
PARTS = {"half": 2, "quarter": 4}  # the last 1/2 and the last 1/4 of the epochs


def swings(dice: list[float]) -> dict:
    """Swing measures of one run's validation Dice per epoch."""
    found = {}
    for part, share in PARTS.items():
        tail = dice[len(dice) - len(dice) // share :]
        steps = [b - a for a, b in zip(tail, tail[1:], strict=False)]
        found |= {
            f"{part}_sd": statistics.pstdev(tail),
            f"{part}_mean_step": statistics.mean(abs(s) for s in steps),
            f"{part}_max_drop": max(0.0, -min(steps)),
            f"{part}_low": min(tail),
        }
    best = max(range(len(dice)), key=dice.__getitem__)
    return found | {"best": dice[best], "best_epoch": best + 1, "last": dice[-1]}


def measure(folder: Path, report: Report) -> dict:
    """``{model: [swing measures per seed]}`` of the runs in ``folder``."""
    rows = {}
    for name, stem in MODELS.items():
        runs = sorted(folder.glob(f"{stem}-seed*"), key=lambda p: int(p.name.rsplit("seed", 1)[1]))
        for run in runs:
            history = json.loads((run / "metrics.json").read_text())["history"]
            found = swings([h["valid_dice"] for h in history])
            seed = int(run.name.rsplit("seed", 1)[1])
            rows.setdefault(name, []).append(found)
            train = yaml.safe_load((run / "config.yaml").read_text())["train"]
            rate = {k: train.get(k) for k in ("learning_rate", "schedule", "warmup_fraction")}
            setting = {"runs": str(folder), "seed": seed, **rate}
            seconds = [sum(h["seconds"] for h in history)]  # training, validation included
            report.results.append(Result("valid_dice swings", name, setting, seconds, found))
    for name, found in rows.items():
        mean = {k: statistics.mean(f[k] for f in found) for k in found[0]}
        worst_drop = {p: max(f[f"{p}_max_drop"] for f in found) for p in PARTS}
        worst_low = {p: min(f[f"{p}_low"] for f in found) for p in PARTS}
        parts = "; ".join(
            f"last {p}: sd {mean[f'{p}_sd']:.4f}, mean |step| {mean[f'{p}_mean_step']:.4f}, "
            f"max drop {mean[f'{p}_max_drop']:.4f} (worst {worst_drop[p]:.4f}), "
            f"low {mean[f'{p}_low']:.4f} (worst {worst_low[p]:.4f})"
            for p in PARTS
        )
        report.notes.append(
            f"{folder} {name}, means over {len(found)} seeds: {parts}; "
            f"best {mean['best']:.4f} (epoch {mean['best_epoch']:.1f}), last {mean['last']:.4f}"
        )
    return rows


def batchnorm(config: Path, overrides: list[str], report: Report) -> None:
    """Per epoch, validation Dice with running and with recomputed BatchNorm statistics."""
    import copy

    import torch
    from torch import nn

    from attnkit.apps.segmentation.config import load_config
    from attnkit.apps.segmentation.sets import load_sets
    from attnkit.apps.segmentation.training import SegmentationTask

    cfg = load_config(config, overrides)
    t = cfg.train
    assert t.schedule == "constant" and t.clip_norm == 0, "a constant rate, no clipping"
    torch.set_num_threads(t.torch_threads)
    torch.manual_seed(t.seed)
    task = SegmentationTask(cfg, load_sets(cfg.data))
    model, train = task.build_model(), task.sets["train"]
    optimiser = torch.optim.Adam(model.parameters(), lr=t.learning_rate, betas=t.betas)

    def recomputed() -> float:
        again = copy.deepcopy(model)
        for layer in again.modules():
            if isinstance(layer, nn.BatchNorm2d):
                layer.reset_running_stats()
                layer.momentum = None  # a cumulative average
        with torch.no_grad():
            for start in range(0, len(train), t.batch_size):
                again(train.images[start : start + t.batch_size])
        return task.validate(again)["valid_dice"]

    curves, started = {"running": [], "recomputed": []}, time.perf_counter()
    for epoch in range(1, t.epochs + 1):
        model.train()
        for batch in task.epoch_batches(epoch):
            optimiser.zero_grad()
            loss = task.loss(model, batch)
            (loss.total / loss.units).backward()
            optimiser.step()
        curves["running"].append(task.validate(model)["valid_dice"])
        curves["recomputed"].append(recomputed())
        print(
            f"epoch {epoch}: valid Dice {curves['running'][-1]:.4f} with running statistics, "
            f"{curves['recomputed'][-1]:.4f} recomputed",
            flush=True,
        )
    seconds = [time.perf_counter() - started]
    for name, dice in curves.items():
        found = swings(dice)
        report.results.append(Result("batchnorm", name, {"overrides": overrides}, seconds, found))
        report.notes.append(
            f"{name} statistics: " + ", ".join(f"{k} {v:.4f}" for k, v in found.items())
        )
    report.data["valid_dice"] = curves


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="*", help="folders of segmentation_compare runs")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--batchnorm", action="store_true", help="train one run, see above")
    parser.add_argument("--config", type=Path, default=Path("configs/shapes-attention-unet.yaml"))
    parser.add_argument("--set", nargs="*", default=[], help="config overrides (--batchnorm)")
    args = parser.parse_args(argv)
    report = Report(
        "segmentation-swings", script_command("benchmarks/segmentation_swings.py", argv), vars(args)
    )
    if args.batchnorm:  # the constant rate the swings were seen with
        batchnorm(args.config, ["train.schedule=constant", *args.set], report)
    for folder in args.runs:
        measure(folder, report)
    print("\n".join(report.notes))
    if args.out:
        report.write(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
