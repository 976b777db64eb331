"""U-Net against Attention U-Net, the gates being the only difference: test Dice, IoU, pixel
error and foreground precision/recall/F1 over seeds, training time per seed, and a picture of
input, truth, prediction and each gate's map (issue 18).

    python benchmarks/segmentation_compare.py                     # generated shapes, seeds 0 1 2
    python benchmarks/segmentation_compare.py --config configs/isbi-attention-unet.yaml \\
        --seeds 0 --out benchmarks/results/segmentation-isbi.json --figure docs/isbi-gates.png

``--config`` is the Attention U-Net's config; the U-Net is the same with ``model.gates=false``.
Each (model, seed) trains afresh into RUNS/MODEL-seedN. Writes JSON (default
benchmarks/results/segmentation-shapes.json) and the figure of the first seed's Attention U-Net
on the first test image (default docs/segmentation-gates.png).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

import torch

from attnkit.apps.segmentation.config import load_config
from attnkit.apps.segmentation.run import SegmentationRun
from attnkit.apps.segmentation.sets import load_sets
from attnkit.apps.segmentation.training import SegmentationTask
from attnkit.apps.segmentation.views import plot_segmentation
from attnkit.engine.trainer import fit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.report import Report, Result, script_command  # noqa: E402

MODELS = {"U-Net": ["model.gates=false"], "Attention U-Net": ["model.gates=true"]}
SCORES = ("dice", "iou", "pixel_error", "precision", "recall", "f1")


def run_all(args, report: Report) -> dict:
    """Train every (model, seed); returns ``{model: [test scores per seed]}``."""
    sets, rows = None, {name: [] for name in MODELS}
    for seed in args.seeds:
        for name, overrides in MODELS.items():
            cfg = load_config(args.config, [*overrides, f"train.seed={seed}", *args.set])
            sets = sets or load_sets(cfg.data)  # the same images for every run
            out = args.runs / f"{name.replace(' ', '-').lower()}-seed{seed}"
            shutil.rmtree(out, ignore_errors=True)
            load = os.getloadavg()[0]
            trained = fit(SegmentationTask(cfg, sets), out)
            test = trained.final["test"]
            rows[name].append(test)
            scores = {**{k: test[k] for k in SCORES}, "parameters": trained.n_parameters}
            setting = {"seed": seed, "load_before": load}
            report.results.append(Result("test", name, setting, [trained.seconds], scores))
            print(
                f"{name} seed {seed}: Dice {test['dice']:.4f} F1 {test['f1']:.4f} "
                f"({trained.seconds:.0f} s, load {load:.1f})",
                flush=True,
            )
    return rows


def summarise(rows: dict, report: Report) -> None:
    """Mean and spread (population standard deviation) of each score per model."""
    for name, tests in rows.items():
        for key in SCORES:
            values = [t[key] for t in tests]
            sd = statistics.pstdev(values) if len(values) > 1 else 0.0
            report.notes.append(
                f"{name} {key}: {statistics.mean(values):.4f} ± {sd:.4f} over {len(values)} seed(s)"
            )
    gap = [
        a["dice"] - u["dice"] for a, u in zip(rows["Attention U-Net"], rows["U-Net"], strict=True)
    ]
    report.notes.append(
        f"Attention U-Net - U-Net Dice: {statistics.mean(gap) * 100:+.2f} points "
        f"(per seed {', '.join(f'{g * 100:+.2f}' for g in gap)})"
    )
    print("\n".join(report.notes))


def figure(args) -> None:
    run = SegmentationRun.load(args.runs / f"attention-u-net-seed{args.seeds[0]}")
    test = load_sets(run.config.data)["test"]
    out = run.predict(test.images[:1])
    plot_segmentation(
        test.images[0, 0].numpy(),
        out.logits[0, 0].numpy(),
        args.figure,
        truth=test.masks[0, 0].numpy(),
        gates=[g[0, 0].numpy() for g in out.gates],
        title=f"Attention U-Net, {test.names[0]}",
    )
    print(f"wrote {args.figure}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/shapes-attention-unet.yaml"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--set", nargs="*", default=[], help="more config overrides")
    parser.add_argument("--runs", type=Path, default=Path("runs/segmentation-compare"))
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/segmentation-shapes.json")
    )
    parser.add_argument("--figure", type=Path, default=Path("docs/segmentation-gates.png"))
    args = parser.parse_args(argv)
    report = Report(
        "segmentation-compare",
        script_command("benchmarks/segmentation_compare.py", argv),
        vars(args),
    )
    report.options["threads"] = torch.get_num_threads()
    summarise(run_all(args, report), report)
    report.write(args.out)
    print(f"wrote {args.out}")
    figure(args)


if __name__ == "__main__":
    main()
