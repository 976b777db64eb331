"""What every command of attnkit shares, whichever package defines it: the error boundary
(:func:`run_or_exit`: any error is one line on stderr naming the file, line or field, and exit
code 2), the ``--debug`` option and the logging set-up. Applications define their commands on a
``typer.Typer`` of their own with these; :mod:`attnkit.cli` gathers them (applications never
import the CLI)."""

from __future__ import annotations

import logging
import sys
import time
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
        release_console()
        raise
    except Exception as err:
        release_console(drop=not debug)  # the error line alone, not the set-up's INFO lines
        if cleanup is not None:
            cleanup()
        if debug:
            raise
        from attnkit.application import WrongRunKind

        line = err.for_command(command) if isinstance(err, WrongRunKind) else _one_line(err)
        print(f"attnkit {command}: error: {line}", file=sys.stderr)
        raise typer.Exit(code=2) from None
    release_console()


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
    """INFO to stderr (and to ``run_dir/train.log``). The console holds the INFO lines of the
    set-up (:class:`HeldConsole`), so a run that fails before it trains prints its error line
    alone; ``train.log`` gets every line as it comes."""
    handlers: list[logging.Handler] = [HeldConsole(sys.stderr)]
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


class HeldConsole(logging.StreamHandler):
    """stderr, holding INFO records until the work is under way: until a record marked
    ``extra={"stage": "training"}`` (the engine's first line of training), a warning or
    error, or :data:`HOLD_SECONDS` after the first held record (a slow set-up still shows its
    progress). :func:`release_console` prints what is held, or drops it when the command
    failed: its error line then stands alone."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self.held: list[logging.LogRecord] = []
        self.since: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.since is None and self.held is not None:
            self.since = time.monotonic()
        waited = self.since is not None and time.monotonic() - self.since > HOLD_SECONDS
        started = getattr(record, "stage", None) == "training"
        if self.held is None:
            super().emit(record)
        elif record.levelno >= logging.WARNING or started or waited:
            self.let_go(drop=False)
            super().emit(record)
        else:
            self.held.append(record)

    def let_go(self, drop: bool) -> None:
        """Print the held records (none when ``drop``); later records print as they come."""
        held, self.held = self.held or [], None
        for record in [] if drop else held:
            super().emit(record)


HOLD_SECONDS = 5.0


def release_console(drop: bool = False) -> None:
    """Print (or, after a failure, drop) the INFO lines the console holds (:class:`HeldConsole`)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, HeldConsole):
            handler.let_go(drop)


Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]
Device = Annotated[
    str | None,
    typer.Option(
        "--device",
        help="Where the model runs: auto (CUDA, then MPS, then the CPU), cpu, cuda, cuda:N or mps.",
    ),
]
