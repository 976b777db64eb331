"""What every command of attnkit shares, whichever package defines it: the error boundary
(:func:`run_or_exit`: any error is one line on stderr naming the file, line or field, and exit
code 2), the ``--debug`` option and the logging set-up. Applications define their commands on a
``typer.Typer`` of their own with these; :mod:`attnkit.cli` gathers them (applications never
import the CLI)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer


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
        from attnkit.application import WrongRunKind

        line = err.for_command(command) if isinstance(err, WrongRunKind) else _one_line(err)
        print(f"attnkit {command}: error: {line}", file=sys.stderr)
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


def setup_logging(run_dir: Path | None = None, quiet: bool = False) -> None:
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
Device = Annotated[
    str | None,
    typer.Option(
        "--device",
        help="Where the model runs: auto (CUDA, then MPS, then the CPU), cpu, cuda, cuda:N or mps.",
    ),
]
