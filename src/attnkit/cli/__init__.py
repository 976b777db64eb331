"""The ``attnkit`` command line. Thin: it parses options and calls library functions.

Commands live in :mod:`.explain` (explain, demo: learning), :mod:`.runs` (train, evaluate,
predict, report, serve: one grammar for every task), each application's ``cli`` module (its own
commands, from its App: ``attnkit GROUP COMMAND``, see :mod:`.groups`) and :mod:`.bench`.

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
    rich_markup_mode=None,  # click's plain help: paragraphs rewrapped, no <bool> metavars
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

    Start with `attnkit explain` and `attnkit demo`; then `attnkit train CONFIG` for any
    application (configs/), and `evaluate`, `predict`, `report`, `serve` on the run directory
    it writes. Each application's own commands are in its group: `attnkit GROUP --help`.
    """
    import os

    # Every command raises glibc's mmap and trim thresholds (docs/benchmarks.md: fresh large
    # allocations pay for page faults; 0.69x the time on both measured workloads).
    # ATTNKIT_MALLOPT=0 turns it off.
    if os.environ.get("ATTNKIT_MALLOPT", "1") != "0":
        from attnkit.runtime import apply_mallopt

        apply_mallopt()


def _plain_usage() -> None:
    """Usage lines as click and man pages write them (``train [OPTIONS] CONFIG``): typer 0.29
    wraps a required argument in braces (``{CONFIG}``). Left as typer has it where its
    internals differ."""
    from typer.core import TyperArgument

    if not hasattr(TyperArgument, "_usage_display_name"):
        return

    def usage(self) -> str:
        raw = self.metavar or (self.name or "").upper()
        name = raw if self.required else f"[{raw}]"
        return name + ("..." if self.nargs != 1 else "")

    TyperArgument._usage_display_name = usage


_plain_usage()

from attnkit.commands import Debug, run_or_exit  # noqa: E402, F401  (the shared pieces)
from attnkit.commands import setup_logging as _logging  # noqa: E402, F401

# The commands, in the order `attnkit --help` shows them (the learning order): explain and
# demo, the run commands every application shares, each application's own group, the tools.
# The CLI's modules register on `app` when imported; each application's group comes from its
# App (applications never import the CLI), in registry order, with hidden aliases for the
# top-level names its commands had before they moved into the group (:mod:`.groups`).
for _name in ("attnkit.cli.explain", "attnkit.cli.runs"):
    importlib.import_module(_name)

from attnkit.cli.groups import add_application_groups  # noqa: E402

add_application_groups(app)
importlib.import_module("attnkit.cli.bench")
