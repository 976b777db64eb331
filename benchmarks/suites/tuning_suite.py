"""Suite ``tuning``: what the CLI should set for glibc malloc and OpenMP waiting, measured.

Variants, each a fresh process (these settings act only at process start), alternating over
``--repeats`` rounds: ``default`` (what ``import attnkit`` sets: ``OMP_WAIT_POLICY=PASSIVE``,
malloc untouched), ``malloc-env`` (``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` in
the environment), ``mallopt`` (the same thresholds through ``mallopt(3)`` at start,
:func:`attnkit.runtime.apply_mallopt`) and ``omp-active`` (spin-waiting threads).
Each process times the readable attention path with weights (L=1024, forward+backward) and a
Transformer training step; the ratios are against ``default`` from the same round.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from attnkit.runtime import MMAP_THRESHOLD, TRIM_THRESHOLD
from benchmarks.suites.report import Comparison, Report, Result

WORKER = Path(__file__).with_name("tuning_worker.py")  # run by path: the child needs no sys.path

VARIANTS = {
    "default": {},
    "malloc-env": {
        "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
        "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD),
    },
    "mallopt": {"ATTNKIT_MALLOPT": "1"},
    "omp-active": {"OMP_WAIT_POLICY": "ACTIVE"},
}


def _child(variant: str, repeats: int, tiny: bool) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "ATTNKIT_MALLOPT")
    }
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    env.update(VARIANTS[variant])
    cmd = [sys.executable, str(WORKER), str(repeats)]
    done = subprocess.run(
        cmd + (["--tiny"] if tiny else []), env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_tuning(opts, report: Report) -> None:
    per_call = 1 if opts.tiny else 3
    medians: dict[str, dict[str, list[float]]] = {v: {} for v in VARIANTS}
    for _ in range(opts.repeats):
        for variant in VARIANTS:
            for work, times in _child(variant, per_call, opts.tiny).items():
                medians[variant].setdefault(work, []).append(statistics.median(times))
    report.options.update(variants=VARIANTS, calls_per_process=per_call)
    for variant, works in medians.items():
        for work, times in works.items():
            report.results.append(Result(work, variant, {"env": VARIANTS[variant]}, times))
    for variant in VARIANTS:
        if variant == "default":
            continue
        for work in medians["default"]:
            ratios = [
                a / b for a, b in zip(medians[variant][work], medians["default"][work], strict=True)
            ]
            report.comparisons.append(Comparison(work, variant, "default", ratios))
