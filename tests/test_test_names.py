"""pytest imports test files of folders without ``__init__.py`` by their base name (its
default "prepend" import mode), so two ``test_task.py`` in different folders stop the whole
suite at collection ("import file mismatch"), as a clean clone once showed. Every test
file's name must be unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_file_name_is_unique():
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)
    repeated = {
        name: sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob(name))
        for name, count in names.items()
        if count > 1
    }
    assert not repeated, f"test files with the same name (rename one): {repeated}"
