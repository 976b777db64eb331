"""``python -m benchmarks SUITE [options]``: the ``attnkit bench`` command."""

import sys

import attnkit  # noqa: F401 - sets OMP_WAIT_POLICY before torch is imported
from attnkit.cli import app

if __name__ == "__main__":
    app(["bench", *sys.argv[1:]], prog_name="python -m benchmarks")
