"""Where an im2latex training image's time goes: rendering it (mathtext) and one training step,
for the input resolutions issue 38 asks to compare, in float32 and bfloat16 autocast.

    OMP_NUM_THREADS=2 python benchmarks/im2latex_throughput.py \
        --out benchmarks/results/im2latex-throughput.json

The batches are real ones: fresh generated formulas of ``configs/im2latex-fresh.yaml`` as its
task plans and collates them (:mod:`attnkit.apps.im2latex.fresh`, epoch 2), the same
``--batches`` batches for every variant. The variants keep an 8 x 8-pixel grid cell on the
image unless named otherwise:

- ``base``: the config's CNN, pools 2x2, 2x2, 2x1, 1x2;
- ``rows4``: less pooling in height, pools 2x2, 1x2, 2x1, 1x2 (a 4 x 8 cell: twice the rows);
- ``up2``: the image scaled up 2 times before the CNN (``model.upsample: 2``), pools 2x2 x 4.

Each round times every variant and precision once over all batches, the order rotated per round
(:func:`benchmarks.suites.measure.interleave`); the report gives the median milliseconds per
image and, per round, each variant's time over ``base``'s in float32.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from attnkit.apps.im2latex.config import load_config
from attnkit.apps.im2latex.fresh import render_fresh
from attnkit.apps.im2latex.training import Im2LatexTask
from attnkit.engine.rundir import RunDir

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.measure import interleave  # noqa: E402
from benchmarks.suites.report import Comparison, Report, Result, script_command  # noqa: E402

VARIANTS = {
    "base": [],
    "rows4": ["model.pools=[[2,2],[1,2],[2,1],[1,2]]"],
    "up2": ["model.upsample=2", "model.pools=[[2,2],[2,2],[2,2],[2,2]]"],
}


def training_steps(config: str, sets: list[str], batches: int, bf16: bool):
    """A function running one training step on each of the first ``batches`` batches."""
    cfg = load_config(config, ["data.real=null", "train.workers=0", *sets])
    task = Im2LatexTask(cfg)
    task.prepare(RunDir(tempfile.mkdtemp()), resume=False)
    torch.manual_seed(0)
    model = task.build_model().train()
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    ready = [task.collate(b) for b in task.epoch_batches(2)[:batches]]

    def run() -> None:
        for r in ready:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = task.loss(model, r)
            optimiser.zero_grad()
            (loss.total / loss.units).backward()
            optimiser.step()

    return run, task, sum(r.ids.shape[0] for r in ready)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/im2latex-fresh.yaml")
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="write the report here (JSON)")
    args = parser.parse_args(argv)
    report = Report(
        "im2latex-throughput", script_command("benchmarks/im2latex_throughput.py", argv), vars(args)
    )
    fns, images, task = {}, 0, None
    for name, sets in VARIANTS.items():
        for bf16 in (False, True):
            fns[f"{name} {'bf16' if bf16 else 'fp32'}"], task, images = training_steps(
                args.config, sets, args.batches, bf16
            )
    items = [i for b in task.epoch_batches(2)[: args.batches] for i in b]
    start = time.perf_counter()
    for item in items:
        render_fresh(item, task.config.data)
    render_ms = (time.perf_counter() - start) / len(items) * 1e3
    times = interleave(fns, args.repeats, warmup=1)
    print(f"threads={torch.get_num_threads()} images={images} repeats={args.repeats} (medians)")
    print(f"{'render (mathtext, one process)':<32} {render_ms:6.2f} ms/image")
    case = f"{args.batches} fresh batches, {images} images"
    for name, seconds in times.items():
        ms = statistics.median(seconds) / images * 1e3
        report.results.append(Result(case, name, {}, seconds, {"ms/image": ms}))
        ratios = [s / b for s, b in zip(seconds, times["base fp32"], strict=True)]
        report.comparisons.append(Comparison(case, name, "base fp32", ratios, kind="time ratio"))
        print(f"{name:<32} {ms:6.2f} ms/image  x{statistics.median(ratios):.2f} of base fp32")
    report.results.append(Result(case, "render", {}, [render_ms / 1e3], {"ms/image": render_ms}))
    if args.out is not None:
        report.write(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
