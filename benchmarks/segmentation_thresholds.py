"""Foreground F1 of a segmentation run at several probability thresholds, on its training and
test images: a diagnostic, not a result (a threshold read off the test images is an oracle).

    python benchmarks/segmentation_thresholds.py runs/isbi-att-512-elastic --flips

It says whether the 0.5 threshold is what holds F1 back (compare the test row's best with its
0.5 column) and whether the model fits its own training images (the train row).
"""

from __future__ import annotations

import argparse

from attnkit.apps.segmentation.run import SegmentationRun
from attnkit.apps.segmentation.sets import load_sets
from attnkit.apps.segmentation.training import predict_set
from attnkit.metrics.segmentation import scores


def f1_by_threshold(run_dir: str, thresholds: list[float], flips: bool) -> dict:
    """``{split: {threshold: F1}}`` for the run's train and test images."""
    run = SegmentationRun.load(run_dir)
    sets = load_sets(run.config.data)
    table = {}
    for split in ("train", "test"):
        if split in sets:
            probs, _ = predict_set(run.model, sets[split], batch=4, flips=flips)
            truth = sets[split].masks > 0.5
            table[split] = {t: scores(probs > t, truth).f1 for t in thresholds}
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.4, 0.5, 0.6, 0.7, 0.8])
    parser.add_argument("--flips", action="store_true", help="mean of the 8 flips and turns")
    args = parser.parse_args(argv)
    for split, row in f1_by_threshold(args.run, args.thresholds, args.flips).items():
        print(f"{split:<6}", "  ".join(f"{t:.2f}: {f1:.4f}" for t, f1 in row.items()))


if __name__ == "__main__":
    main()
