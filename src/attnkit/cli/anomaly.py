"""``attnkit`` commands for the anomaly work (filled in by its owner)."""

from __future__ import annotations

from . import Debug, _logging, app, run_or_exit  # noqa: F401
