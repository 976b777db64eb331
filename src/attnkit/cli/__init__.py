"""The ``attnkit`` command line. Thin: it parses options and calls library functions.

Commands live in :mod:`.explain` (explain), :mod:`.translation` (train, translate, evaluate,
data, experiment, demo) and :mod:`.inspect` (align, report, serve).

Errors are one line on stderr and exit code 2; ``--debug`` shows the traceback instead.
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


@app.callback()
def main() -> None:
    """attnkit: attention in deep learning, every classic mechanism with its weights."""
    import os

    # Every command raises glibc's mmap and trim thresholds (docs/benchmarks.md: fresh large
    # allocations pay for page faults; 0.69x the time on both measured workloads).
    # ATTNKIT_MALLOPT=0 turns it off.
    if os.environ.get("ATTNKIT_MALLOPT", "1") != "0":
        from attnkit.runtime import apply_mallopt

        apply_mallopt()


def run_or_exit(work: Callable[[], None], command: str, debug: bool) -> None:
    """Run ``work``; turn an expected error into one line on stderr and exit code 2."""
    if debug:
        work()
        return
    from attnkit.apps.translation.data.download import DownloadError

    try:
        work()
    except (ValueError, TypeError, OSError, KeyError, DownloadError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"attnkit {command}: error: {message}", file=sys.stderr)
        raise typer.Exit(code=2) from None


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


# The commands register themselves on `app` when their modules are imported.
from attnkit.cli import anomaly, bench, caption, classify, explain, inspect, translation, vision  # noqa: E402, F401, I001
