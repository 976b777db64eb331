"""Run one suite: build its options, time it, write the JSON report and print the table."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.suites.report import Report, check_schema, print_table


@dataclass
class BenchOptions:
    """Everything the command line can set; each suite reads the fields it needs."""

    lengths: tuple[int, ...] | None = None
    repeats: int = 3
    tiny: bool = False
    dtypes: tuple[str, ...] = ("fp32", "bf16")
    modes: tuple[str, ...] = ("fwd", "fwd+bwd")
    masks: tuple[str, ...] = ("causal", "padding")
    threads: int | None = None
    memory: bool = True
    sentences: int = 200
    pairs: int = 2000
    joey_venv: str | None = None
    data_dir: str | None = None
    work_dir: str = "attnkit-bench"
    plot: str | None = None
    device: str = "cpu"  # kernels: where to time them (attnkit.devices); the others: the CPU
    extra: dict = field(default_factory=dict)


def _kernels(opts: BenchOptions, report: Report) -> tuple[str, ...]:
    from benchmarks.suites.kernels import KernelOptions, run_kernels

    if opts.tiny:
        kopts = KernelOptions(
            lengths=opts.lengths or (16, 32),
            batch=2,
            heads=2,
            head_dim=8,
            dtypes=opts.dtypes,
            modes=opts.modes,
            masks=opts.masks,
            repeats=opts.repeats,
            chunk=8,
            peak_size=128,
            memory=opts.memory,
            device=opts.device,
        )
    else:
        kopts = KernelOptions(
            repeats=opts.repeats,
            dtypes=opts.dtypes,
            memory=opts.memory,
            modes=opts.modes,
            masks=opts.masks,
            device=opts.device,
        )
        if opts.lengths:
            kopts.lengths = opts.lengths
    report.options.update(kernel_options=vars(kopts))
    run_kernels(kopts, report)
    return ("GFLOP/s", "of_peak", "peak_MB")


def _cost(opts: BenchOptions, report: Report) -> tuple[str, ...]:
    from benchmarks.suites.cost import run_cost

    run_cost(opts, report)
    return ("GFLOP", "predicted_ratio")


def _train(opts: BenchOptions, report: Report) -> tuple[str, ...]:
    from benchmarks.suites.seq2seq_suites import run_train

    run_train(opts, report)
    return ("tokens/s", "tokens", "steps")


def _decode(opts: BenchOptions, report: Report) -> tuple[str, ...]:
    from benchmarks.suites.seq2seq_suites import run_decode

    run_decode(opts, report)
    return ("sentences/s", "out_tokens", "out_tokens/s")


def _tuning(opts: BenchOptions, report: Report) -> tuple[str, ...]:
    from benchmarks.suites.tuning_suite import run_tuning

    run_tuning(opts, report)
    return ()


def _without_slow_bf16(opts: BenchOptions, report: Report) -> BenchOptions:
    """Drop the bf16 rows where this CPU has no native bfloat16 (a reference GEMM would be
    timed, not attnkit), saying so in the report's notes (:mod:`attnkit.precision`)."""
    from dataclasses import replace

    from attnkit.precision import native_bf16

    native, why = native_bf16("cpu")
    if "bf16" not in opts.dtypes or native:
        return opts
    note = f"bf16 rows skipped: {why}, so bfloat16 would run on a reference GEMM"
    report.notes.append(note)
    print(note)
    return replace(opts, dtypes=tuple(d for d in opts.dtypes if d != "bf16"))


SUITES = {
    "kernels": _kernels,
    "cost": _cost,
    "train": _train,
    "decode": _decode,
    "tuning": _tuning,
}


def run_suite(suite: str, opts: BenchOptions, out: str | Path | None = None) -> dict:
    """Run ``suite`` and write its report to ``out`` (default benchmarks/results/SUITE.json)."""
    import torch

    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    if opts.threads is not None:
        torch.set_num_threads(opts.threads)
    options = {k: v for k, v in vars(opts).items() if k != "extra"}
    report = Report(suite, shlex.join(["python", "-m", "benchmarks", *sys.argv[1:]]), options)
    opts = _without_slow_bf16(opts, report)
    metrics = SUITES[suite](opts, report)
    out = Path(out) if out is not None else Path("benchmarks/results") / f"{suite}.json"
    data = report.write(out)
    check_schema(data)
    print_table(data, metrics)
    print(f"wrote {out}")
    return data
