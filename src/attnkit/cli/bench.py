"""``attnkit bench SUITE``: the benchmark suite (kernels, train, decode, cost, tuning)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.cli import Debug, app, run_or_exit


def _ints(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--lengths must be comma-separated integers, got {text!r}") from None


@app.command(rich_help_panel="Tools")
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
    debug: Debug = False,
) -> None:
    """Time a suite and write its JSON report (machine, versions, medians, min-max)."""

    def work() -> None:
        import tempfile

        from attnkit.benchmarking.runner import BenchOptions, run_suite

        scratch = work_dir or str(Path(tempfile.gettempdir()) / "attnkit-bench")

        opts = BenchOptions(
            lengths=_ints(lengths), repeats=repeats, tiny=tiny,
            dtypes=tuple(dtypes.split(",")), modes=tuple(modes.split(",")),
            masks=tuple(masks.split(",")), threads=threads, memory=memory,
            sentences=sentences, pairs=pairs, joey_venv=joey_venv, data_dir=data_dir,
            work_dir=scratch, plot=plot,
        )  # fmt: skip
        run_suite(suite, opts, out)

    run_or_exit(work, "bench", debug)
