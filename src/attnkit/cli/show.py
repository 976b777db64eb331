"""Result dataclasses (:mod:`attnkit.results`) as text for people, or as JSON with ``--json``.

The applications return the dataclasses; only this module decides how they read."""

from __future__ import annotations

from typing import Any

import typer

from attnkit.results import Predictions, Scores, Table, Trained, Written, as_json


def number(value: Any) -> str:
    """A score as people read it: four significant digits, integers as they are."""
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    return f"{value:.4g}"


def metrics_line(metrics: dict[str, Any]) -> str:
    """``name value, name value`` (nested dicts flattened as ``outer.inner``)."""
    parts = []
    for key, value in metrics.items():
        if isinstance(value, dict):
            parts += [f"{key}.{k} {number(v)}" for k, v in value.items()]
        else:
            parts.append(f"{key} {number(value)}")
    return ", ".join(parts)


def table_text(table: Table) -> list[str]:
    """A table as aligned columns under its title."""
    rows = [table.columns, *[[number(v) for v in row] for row in table.rows]]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(table.columns))]
    lines = [table.title]
    lines += ["  ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return lines


def scores_text(s: Scores) -> str:
    count = f" ({s.count} {s.unit})" if s.count is not None else ""
    lines = [f"{s.run} {s.split}: {metrics_line(s.metrics)}{count}"]
    lines += [f"{name} {s.split}: {metrics_line(m)}" for name, m in s.baselines.items()]
    for table in s.tables:
        lines += table_text(table)
    lines += s.notes
    lines += [f"wrote {path}" for path in s.written]
    return "\n".join(lines)


def trained_text(t: Trained) -> str:
    """One line: the kept epoch and the top-level scores (nested ones: ``--json``)."""
    kept = f"kept epoch {t.best_epoch} of {t.epochs}: " if t.best_epoch is not None else ""
    flat = {k: v for k, v in t.metrics.items() if not isinstance(v, dict | list)}
    return f"{t.run}: {kept}{metrics_line(flat)} ({t.seconds:.0f} s on {t.device})"


def predictions_text(p: Predictions) -> str:
    lines = p.lines() + p.notes
    lines += [f"wrote {path}" for path in p.written]
    return "\n".join(lines)


def written_text(w: Written) -> str:
    return "\n".join(w.files)


TEXT = {
    Scores: scores_text,
    Trained: trained_text,
    Predictions: predictions_text,
    Written: written_text,
}


def echo(result: Any, as_json_too: bool = False) -> None:
    """Print ``result`` for people, or as JSON."""
    text = as_json(result) if as_json_too else TEXT[type(result)](result)
    if text:
        typer.echo(text)
