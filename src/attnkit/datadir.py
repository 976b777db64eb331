"""Where the shared data sets live, for every application: ``$ATTNKIT_DATA_DIR`` if set, else
``../shared/data`` relative to the working directory (the repository's root, where the
commands, the tests and CI run, with ``../shared`` beside it), else ``../shared/data`` beside
the repository this package was installed from (``pip install -e .``), so a notebook or a
script run from another directory finds it too. Data sets are read from there and never copied
into the repository."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "ATTNKIT_DATA_DIR"
RELATIVE = Path("..") / "shared" / "data"
CHECKOUT = Path(__file__).resolve().parents[2]  # src/attnkit/datadir.py -> the repository


def default_data_dir() -> Path:
    """``$ATTNKIT_DATA_DIR``; else ``../shared/data`` from the working directory if it exists;
    else beside the source checkout; else the working directory's (errors then name it)."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    for candidate in (RELATIVE, CHECKOUT / RELATIVE):
        if candidate.is_dir():
            return candidate
    return RELATIVE
