"""Fixtures for the data tests: the shared real-data directory (skipped when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_DEFAULT = Path(__file__).resolve().parents[4] / ".." / "shared" / "data"


def shared_data_dir() -> Path | None:
    """``$ATTNKIT_DATA_DIR``, else ``../shared/data`` beside the repository; None if absent."""
    path = Path(os.environ.get("ATTNKIT_DATA_DIR") or _DEFAULT).resolve()
    return path if path.is_dir() else None


@pytest.fixture
def data_dir() -> Path:
    path = shared_data_dir()
    if path is None:
        looked = os.environ.get("ATTNKIT_DATA_DIR") or _DEFAULT.resolve()
        pytest.skip(f"real data not found at {looked} (set ATTNKIT_DATA_DIR to the data folder)")
    return path


@pytest.fixture
def multi30k_raw(data_dir: Path) -> Path:
    raw = data_dir / "multi30k" / "task1" / "raw"
    if not raw.is_dir():
        pytest.skip(f"Multi30k not found under {data_dir}")
    return raw


@pytest.fixture
def tatoeba_zip(data_dir: Path) -> Path:
    path = data_dir / "tatoeba-eng-deu" / "deu-eng.zip"
    if not path.is_file():
        pytest.skip(f"Tatoeba export not found at {path}")
    return path
