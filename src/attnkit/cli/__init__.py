"""The ``attnkit`` command line. Thin: it parses options and calls library functions.

Commands live in :mod:`.explain` (explain, demo: learning), :mod:`.runs` (train, evaluate,
predict, report, serve: one grammar for every task), each application's ``cli`` module (its own
commands, e.g. :mod:`attnkit.apps.translation.cli`, with ``align``) and :mod:`.bench`.

Errors are one line on stderr and exit code 2 (:func:`run_or_exit`, the error boundary);
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import importlib
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


from attnkit.commands import Debug, run_or_exit  # noqa: E402, F401  (the shared pieces)
from attnkit.commands import setup_logging as _logging  # noqa: E402, F401

# The commands, in the order `attnkit --help` shows them (the learning order): explain and
# demo, the run commands every task shares, each application's own, then the tools. The CLI's
# modules register on `app` when imported; an application's `cli` module keeps its commands on
# a Typer of its own (applications never import the CLI), gathered here.
COMMAND_MODULES = (
    "attnkit.cli.explain",
    "attnkit.cli.runs",
    "attnkit.apps.translation.cli",
    "attnkit.apps.classification.cli",
    "attnkit.apps.vision.cli",
    "attnkit.apps.anomaly.cli",
    "attnkit.apps.captioning.cli",
    "attnkit.cli.bench",
)
for _name in COMMAND_MODULES:
    _module = importlib.import_module(_name)
    if _name.startswith("attnkit.apps."):
        app.registered_commands += _module.commands.registered_commands
        app.registered_groups += _module.commands.registered_groups
