"""What applications return: plain dataclasses that the command line formats as text and
``--json`` prints as they are (:func:`as_json`). Nothing here imports torch."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Predictions", "Scores", "Shown", "Table", "Trained", "Written", "as_json"]


@dataclass
class Table:
    """A titled table of scores (e.g. BLEU by source length): ``columns`` and ``rows``."""

    title: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass
class Scores:
    """A run scored on a split: ``metrics`` in the order they are shown (numbers, or strings
    such as sacreBLEU's signature), over ``count`` ``unit`` (sentences, images, series);
    ``baselines`` scored on the same data, by name; ``tables`` for breakdowns."""

    run: str
    split: str
    metrics: dict[str, Any]
    count: int | None = None
    unit: str = "examples"
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # files written (e.g. the outputs)
    notes: list[str] = field(default_factory=list)  # lines for people (e.g. warnings)

    def write_outputs(self, path: Path | None, outputs: list[str]) -> Scores:
        """``evaluate --output PATH``: the model's ``outputs``, one a line, written to
        ``path`` (its folder made) and added to :attr:`written`; nothing when ``path`` is
        None. Returns ``self``."""
        if path is not None:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"{line}\n" for line in outputs), encoding="utf-8")
            self.written.append(str(path))
        return self


@dataclass
class Predictions:
    """A run applied to new inputs: one row per input under ``columns`` (shown tab-separated,
    one line a row); ``written``: files written (the rows themselves with ``--output``,
    pictures with ``--picture``)."""

    run: str
    columns: list[str]
    rows: list[list[Any]]
    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # lines for people (e.g. a legend)

    def lines(self) -> list[str]:
        """The rows as tab-separated lines (what ``--output`` writes)."""
        return ["\t".join(_cell(v) for v in row) for row in self.rows]


@dataclass
class Trained:
    """A finished training run: the scores that pick and judge it (``metrics``: the best
    epoch's monitored validation score first, then the final scores the task measured, e.g.
    test accuracy), which epoch was kept, and the time the epochs took."""

    run: str
    metrics: dict[str, Any]
    best_epoch: int | None = None
    epochs: int | None = None
    seconds: float = 0.0
    device: str = "cpu"


@dataclass
class Shown:
    """One input with the model's output and where it attended, for a report or the served
    page: ``record`` (the core attention record, drawn as heatmaps and views) where attention
    is over tokens, ``picture`` (a PNG's bytes) where it is best drawn over an image or a
    series; ``details``: other numbers worth showing (a probability, a score)."""

    input: str
    output: str
    record: Any = None  # attnkit.interpret.structure.AttentionRecord
    picture: bytes | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Written:
    """Files a command wrote (a report, pictures), with what each one is."""

    run: str
    files: list[str]
    what: str = ""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def as_json(result: Any) -> str:
    """A result dataclass as JSON (paths as strings, NaN and infinities as null)."""

    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    return json.dumps(plain(result), indent=2, ensure_ascii=False)
