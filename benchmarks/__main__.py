"""``python -m benchmarks SUITE [options]``: time a suite (:mod:`benchmarks.suites`)."""

import attnkit  # noqa: F401 - sets OMP_WAIT_POLICY before torch is imported
from benchmarks.suites.command import app

if __name__ == "__main__":
    app(prog_name="python -m benchmarks")
