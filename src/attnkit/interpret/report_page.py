"""The pieces of a self-contained HTML run report, shared by every application's
``attnkit report``: the style sheet, escaped tables, inlined PNG pictures, the configuration
and training-history sections, and the page itself. Pictures are base64 and the style sits in
the page: a report has no links, scripts or fonts to fetch, so it opens offline and can be
mailed as one file.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable
from pathlib import Path

from attnkit.config import to_dict

STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; }
th { background: #eee; } tr.best { font-weight: bold; } code { font-size: 0.85em; }
.sections { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
img { max-width: 100%; }
"""


def escape(value) -> str:
    return html.escape(str(value))


def table(header: list[str], rows: list[list], classes: list[str] | None = None) -> str:
    """An HTML table; ``classes``: one CSS class per row (``"best"`` is bold)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    lines = [f"<table><tr>{head}</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        lines.append(f"<tr{cls}>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>")
    return "\n".join(lines) + "</table>"


def fmt(value) -> str:
    """A float with 4 significant digits, ``None`` as empty, the rest as ``str``."""
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def image(path: Path, alt: str) -> str:
    """The PNG at ``path`` inlined as a base64 ``<img>``."""
    return png(Path(path).read_bytes(), alt)


def png(data: bytes, alt: str) -> str:
    """PNG bytes inlined as a base64 ``<img>``."""
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img src="data:image/png;base64,{encoded}" alt="{escape(alt)}">'


def config_section(cfg, metrics: dict) -> str:
    """Each config section as a key/value table, and the parameter count if known."""
    sections = []
    for name, values in to_dict(cfg).items():
        if isinstance(values, dict):
            rows = [[k, fmt(v)] for k, v in values.items()]
            sections.append(f"<div><h3>{escape(name)}</h3>{table(['key', 'value'], rows)}</div>")
    params = metrics.get("n_parameters")
    extra = f"<p>{params:,} parameters.</p>" if params else ""
    return f"<h2>Configuration</h2>{extra}<div class='sections'>{''.join(sections)}</div>"


def history_section(metrics: dict) -> str:
    """``metrics.json``'s history, one row per epoch, the kept epoch in bold."""
    if not metrics.get("history"):
        return "<h2>Training history</h2><p>No history in this run's metrics.json.</p>"
    return f"<h2>Training history</h2>{history_table(metrics)}"


def history_table(metrics: dict) -> str:
    """The table of :func:`history_section` (empty where there is no history)."""
    history = metrics.get("history") or []
    if not history:
        return ""
    keys = ["epoch", *dict.fromkeys(k for h in history for k in h if k != "epoch")]
    rows = [[fmt(h.get(k)) for k in keys] for h in history]
    best = metrics.get("best_epoch")
    classes = ["best" if h.get("epoch") == best else "" for h in history]
    note = f"<p>Kept epoch (bold): {escape(best)}.</p>" if best is not None else ""
    return f"{note}{table(keys, rows, classes)}"


def evaluated_section(root: str | Path, header: list[str], rows_of: Callable[[dict], list]) -> str:
    """ "Scores of every split evaluated": a table with ``rows_of(record)`` for each
    ``RUN/evaluation-SPLIT.json`` that ``attnkit evaluate`` wrote, or how to score one."""
    found = sorted(Path(root).glob("evaluation-*.json"))
    title = "<h2>Scores of every split evaluated</h2>"
    if not found:
        return f"{title}<p>No split scored yet: <code>attnkit evaluate {escape(root)}</code>.</p>"
    rows = [row for path in found for row in rows_of(json.loads(path.read_text("utf-8")))]
    return title + table(header, rows)


def write_page(output: str | Path, title: str, body: list[str]) -> Path:
    """The page ``title`` with ``body`` (HTML fragments) written to ``output``."""
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>attnkit report: {escape(title)}</title><style>{STYLE}</style></head>"
        "<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(page, encoding="utf-8")
    return output
