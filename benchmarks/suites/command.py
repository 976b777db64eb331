"""``python -m benchmarks SUITE [options]``: the suites' command line (kernels, train, decode,
cost, tuning). Run it from the repository root; errors are one line, as attnkit's own."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.commands import Debug, run_or_exit

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


def _ints(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--lengths must be comma-separated integers, got {text!r}") from None


@app.command()
def bench(
    suite: Annotated[str, typer.Argument(help="kernels | train | decode | cost | tuning")],
    out: Annotated[Path | None, typer.Option(help="JSON report path.")] = None,
    lengths: Annotated[
        str | None, typer.Option(help="Comma-separated lengths (kernels, cost).")
    ] = None,
    repeats: Annotated[int, typer.Option(help="Timed repeats per case.")] = 3,
    dtypes: Annotated[
        str,
        typer.Option(
            help="kernels: fp32,bf16; train, decode: with bf16, attnkit is also timed under "
            "bf16 autocast."
        ),
    ] = "fp32,bf16",
    modes: Annotated[str, typer.Option(help="kernels: fwd,fwd+bwd.")] = "fwd,fwd+bwd",
    masks: Annotated[str, typer.Option(help="kernels: causal,padding,none.")] = "causal,padding",
    threads: Annotated[int | None, typer.Option(help="torch.set_num_threads.")] = None,
    memory: Annotated[bool, typer.Option(help="kernels: sample peak memory.")] = True,
    sentences: Annotated[int, typer.Option(help="decode: test sentences.")] = 200,
    pairs: Annotated[int, typer.Option(help="train, decode: training pairs per epoch.")] = 2000,
    joey_venv: Annotated[
        str | None,
        typer.Option(envvar="ATTNKIT_JOEY_VENV", help="JoeyNMT 2.3.0 venv (train, decode)."),
    ] = None,
    data_dir: Annotated[
        str | None, typer.Option(envvar="ATTNKIT_DATA_DIR", help="Where multi30k/ lives.")
    ] = None,
    work_dir: Annotated[
        str | None,
        typer.Option(help="Scratch directory (train, decode); default TMPDIR/attnkit-bench."),
    ] = None,
    plot: Annotated[str | None, typer.Option(help="cost: PNG path for the plot.")] = None,
    tiny: Annotated[bool, typer.Option(help="Tiny sizes (tests, smoke runs).")] = False,
    device: Annotated[
        str, typer.Option(help="kernels: auto, cpu, cuda, cuda:N or mps (the others: cpu).")
    ] = "cpu",
    debug: Debug = False,
) -> None:
    """Time a suite and write its JSON report (machine, versions, medians, min-max)."""
    options = {k: v for k, v in locals().items() if k not in ("suite", "out", "debug")}
    run_or_exit(lambda: _run(suite, out, options), "bench", debug)


def _run(suite: str, out: Path | None, options: dict) -> None:
    """Build the suite's options from the command line's and run it (:func:`.runner.run_suite`),
    with glibc's malloc thresholds raised as every attnkit command raises them (attnkit.cli's
    callback; ``ATTNKIT_MALLOPT=0`` turns it off), so the settings measured are the CLI's."""
    import os
    import tempfile

    from benchmarks.suites.runner import BenchOptions, run_suite

    if options["device"] != "cpu" and suite != "kernels":
        raise ValueError(
            f"--device {options['device']}: the {suite} suite runs on the CPU (its peers, "
            "JoeyNMT and the cost model, are timed there); only kernels takes a device"
        )

    if os.environ.get("ATTNKIT_MALLOPT", "1") != "0":
        from attnkit.runtime import apply_mallopt

        apply_mallopt()
    for name in ("dtypes", "modes", "masks"):
        options[name] = tuple(options[name].split(","))
    options["lengths"] = _ints(options["lengths"])
    scratch = Path(tempfile.gettempdir()) / "attnkit-bench"
    options["work_dir"] = options["work_dir"] or str(scratch)
    run_suite(suite, BenchOptions(**options), out)
