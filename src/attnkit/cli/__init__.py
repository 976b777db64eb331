"""The ``attnkit`` command line. Thin: it parses options and calls library functions.

Commands live in :mod:`.explain` (explain, demo: learning), :mod:`.runs` (train, evaluate,
predict, report, serve: one grammar for every task), one module per application (its own
commands) and :mod:`.inspect` / :mod:`.bench` (tools).

Errors are one line on stderr and exit code 2 (:func:`run_or_exit`, the error boundary);
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="attnkit: attention in deep learning, every classic mechanism with its weights.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from attnkit import __version__

        typer.echo(f"attnkit {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """attnkit: attention in deep learning, every classic mechanism with its weights.

    Start with `attnkit explain` and `attnkit demo`; then `attnkit train CONFIG` for any task
    (configs/), and `evaluate`, `predict`, `report`, `serve` on the run directory it writes.
    """
    import os

    # Every command raises glibc's mmap and trim thresholds (docs/benchmarks.md: fresh large
    # allocations pay for page faults; 0.69x the time on both measured workloads).
    # ATTNKIT_MALLOPT=0 turns it off.
    if os.environ.get("ATTNKIT_MALLOPT", "1") != "0":
        from attnkit.runtime import apply_mallopt

        apply_mallopt()


def run_or_exit(
    work: Callable[[], None], command: str, debug: bool, cleanup: Callable[[], None] | None = None
) -> None:
    """The error boundary: run ``work``; any error becomes one line on stderr (the file, line or
    field it names) and exit code 2, after ``cleanup`` (e.g. removing a half-made run
    directory). ``--debug`` shows the traceback instead."""
    try:
        work()
    except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:
        if cleanup is not None:
            cleanup()
        if debug:
            raise
        print(f"attnkit {command}: error: {_one_line(err)}", file=sys.stderr)
        raise typer.Exit(code=2) from None


def _one_line(err: Exception) -> str:
    """The first line of the error's message, with its type where the message alone would
    not say what went wrong."""
    text = str(err).splitlines()[0] if str(err).strip() else ""
    if isinstance(err, KeyError):
        return f"missing key {text}"
    known = (ValueError, OSError)  # user-facing messages (ConfigError, DataError, ...)
    if not text or not isinstance(err, known):
        hint = " (run with --debug for the traceback)"
        return f"{type(err).__name__}: {text}{hint}" if text else f"{type(err).__name__}{hint}"
    return text


def _logging(run_dir: Path | None = None, quiet: bool = False) -> None:
    """INFO to stderr (and to ``run_dir/train.log``)."""
    import logging

    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if run_dir is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(run_dir / "train.log", encoding="utf-8"))
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        datefmt="%H:%M:%S",
        handlers=handlers,
        force=True,
    )


Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]


# The commands register themselves on `app` when their modules are imported, in this order
# (the learning order `attnkit --help` shows): explain and demo, the run commands, then each
# application's own, then the tools.
from attnkit.cli import explain, runs, translation, classify, vision, anomaly, caption  # noqa: E402, F401, I001
from attnkit.cli import inspect, bench  # noqa: E402, F401, I001
