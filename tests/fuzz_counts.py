"""How many generated inputs each fuzz target tried, and how each ended (for the closing note:
``ATTNKIT_FUZZ_REPORT=counts.json``; the summary is printed at the end of the session)."""

from __future__ import annotations

from collections import Counter

TRIED: Counter = Counter()  # (target, outcome) -> count


def record(target: str, outcome: str) -> None:
    """Count one input of ``target`` that ended in ``outcome`` (e.g. ``"exit 2"``, ``"400"``)."""
    TRIED[(target, outcome)] += 1
