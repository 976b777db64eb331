"""``attnkit bench``: hidden; the benchmark suites moved out of the installed package.

They time attnkit against peers (JoeyNMT in its own venv) and write into the repository's
``benchmarks/results/``, so they live in the repository: ``python -m benchmarks SUITE`` from
its root. The old name says so in one line instead of "No such command".
"""

from __future__ import annotations

import sys

import typer

from attnkit.cli import app

MOVED = (
    "attnkit bench: the benchmark suites live in the repository, not in the installed package: "
    "run `python -m benchmarks SUITE [options]` from its root (docs/benchmarks.md)"
)


@app.command(
    hidden=True, context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def bench() -> None:
    """Moved: ``python -m benchmarks SUITE`` in the repository."""
    print(MOVED, file=sys.stderr)
    raise typer.Exit(code=2)
