"""Where the shared data sets live, for every application: ``$ATTNKIT_DATA_DIR`` if set, else
``../shared/data`` relative to the working directory (the repository's root, where the
commands, the tests and CI run, with ``../shared`` beside it). Data sets are read from there
and never copied into the repository."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "ATTNKIT_DATA_DIR"


def default_data_dir() -> Path:
    """``$ATTNKIT_DATA_DIR``, else ``../shared/data`` relative to the working directory."""
    return Path(os.environ.get(ENV_VAR) or Path("..") / "shared" / "data")
