"""The report of any run (``attnkit report RUN_DIR``): one offline HTML page.

The page holds the run's configuration and training history (``metrics.json``), its scores
(the application's own ``evaluate`` on the test split, else the validation split; a failure
is a note on the page, not a failed report), and a few held-out examples (``App.examples``),
each with its output and attention: an attention record drawn as heatmaps
(:func:`~attnkit.interpret.heatmap.plot_record`, the last layer, mean over heads), or the
application's own picture. An application with more to show passes its sections as
``extra``. Pictures are inlined as base64 PNG (:mod:`attnkit.interpret.report_page`): nothing
to fetch. This module works on the App object only and names no application.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attnkit.engine.rundir import RunDir
from attnkit.interpret import report_page as rp
from attnkit.results import Scores, Shown, Written

SPLITS = ("test", "valid")  # scored in this order: the first that scores some examples


def write_run_report(
    app: Any,
    run_dir: Path,
    output: Path,
    n_examples: int = 3,
    *,
    extra: Sequence[str] = (),
    scores: str | None = None,
) -> Written:
    """Write the report of ``run_dir`` (a run of ``app``) to ``output``. ``extra``: more HTML
    sections after the scores; ``scores``: a section that replaces the generic scores."""
    run = RunDir(run_dir)
    cfg = app.load_config(run.existing_config())
    metrics = run.read_metrics()
    name = getattr(cfg, "name", None) or run.root.name
    body = [
        f"<h1>attnkit {rp.escape(app.title)} report: {rp.escape(name)}</h1>",
        f"<p>Run directory <code>{rp.escape(run.root.resolve())}</code>.</p>",
        rp.config_section(cfg, metrics),
        histories_section(run, metrics),
        scores_section(app, run.root) if scores is None else scores,
        *extra,
        examples_section(app, run.root, n_examples),
    ]
    page = rp.write_page(output, name, body)
    return Written(str(run_dir), [str(page)], "HTML report")


def histories_section(run: RunDir, metrics: dict, most: int = 8) -> str:
    """The run's training history; a run trained as several engine runs (one per part, in
    folders below it) and with no history of its own: each part's, up to ``most``."""
    if metrics.get("history"):
        return rp.history_section(metrics)
    parts = []
    for path in sorted(run.root.rglob("metrics.json")):
        found = RunDir(path.parent).read_metrics() if path.parent != run.root else {}
        if found.get("history") and len(parts) < most:
            where = path.parent.relative_to(run.root)
            parts.append(f"<h3><code>{rp.escape(where)}</code></h3>{rp.history_table(found)}")
    if not parts:
        return rp.history_section(metrics)
    note = f"<p>Trained in parts, each an engine run of its own ({len(parts)} shown).</p>"
    return "<h2>Training history</h2>" + note + "\n".join(parts)


def scores_section(app: Any, run_dir: Path) -> str:
    """The run scored by its application's ``evaluate`` on the first of :data:`SPLITS` that
    has examples; why not, where none does."""
    from attnkit.application import EvaluateOptions

    notes = []
    for split in SPLITS:
        try:
            found = app.evaluate(run_dir, EvaluateOptions(split=split))
        except Exception as error:  # noqa: BLE001 - shown on the page, not raised
            notes.append(f"{split}: {type(error).__name__}: {error}")
            continue
        if found.count != 0:
            return scores_html(found)
        notes.append(f"{split}: no {found.unit}")
    items = "".join(f"<li>{rp.escape(n)}</li>" for n in notes)
    return f"<h2>Scores</h2><p>The run could not be scored here:</p><ul>{items}</ul>"


def scores_html(scores: Scores) -> str:
    """A :class:`~attnkit.results.Scores` as tables: the metrics, baselines and breakdowns."""
    count = f"{scores.count} {scores.unit}" if scores.count is not None else scores.unit
    parts = [
        f"<h2>Scores on {rp.escape(scores.split)}</h2><p>{rp.escape(count)}.</p>",
        rp.table(["metric", "value"], [[k, rp.fmt(v)] for k, v in scores.metrics.items()]),
    ]
    if scores.baselines:
        keys = list(dict.fromkeys(k for b in scores.baselines.values() for k in b))
        rows = [[b, *(rp.fmt(v.get(k)) for k in keys)] for b, v in scores.baselines.items()]
        parts.append("<h3>Baselines on the same data</h3>" + rp.table(["baseline", *keys], rows))
    for t in scores.tables:
        rows = [[rp.fmt(v) for v in row] for row in t.rows]
        parts.append(f"<h3>{rp.escape(t.title)}</h3>" + rp.table(t.columns, rows))
    return "\n".join(parts)


def examples_section(app: Any, run_dir: Path, n: int) -> str:
    """``app.examples(run_dir, n)``, each with its attention; a failure is a note."""
    if n < 1:
        return ""
    try:
        shown = app.examples(run_dir, n)
    except Exception as error:  # noqa: BLE001 - shown on the page, not raised
        return (
            f"<h2>Examples</h2><p>No examples: {rp.escape(type(error).__name__)}: "
            f"{rp.escape(error)}</p>"
        )
    if not shown:
        return "<h2>Examples</h2><p>This run has no held-out examples to show.</p>"
    parts = ["<h2>Examples</h2><p>Held-out examples with the model's output and attention.</p>"]
    parts += [shown_html(s, f"Example {k + 1}") for k, s in enumerate(shown)]
    return "\n".join(parts)


def shown_html(shown: Shown, heading: str) -> str:
    """One :class:`~attnkit.results.Shown`: input, output, details and its pictures."""
    rows = [["input", shown.input], ["output", shown.output]]
    rows += [[k, rp.fmt(v)] for k, v in shown.details.items()]
    parts = [f"<h3>{rp.escape(heading)}</h3>", rp.table(["", ""], rows)]
    if shown.picture is not None:
        parts.append(rp.png(shown.picture, f"{heading}: attention"))
    if shown.record is not None:
        parts += [
            rp.png(data, f"{heading}: {name}") for name, data in record_pictures(shown.record)
        ]
    return "".join(parts)


def record_pictures(record: Any) -> list[tuple[str, bytes]]:
    """Every stack of an attention record as a heatmap PNG (its last layer, mean over
    heads), by name."""
    from attnkit.interpret.heatmap import plot_record

    return [
        (name, png_bytes(lambda path, name=name: plot_record(record, name, path)))
        for name in record.names
    ]


def png_bytes(draw: Callable[[Path], Any]) -> bytes:
    """The PNG that ``draw(path)`` writes, as bytes (for :attr:`Shown.picture`)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "picture.png"
        draw(path)
        return path.read_bytes()
