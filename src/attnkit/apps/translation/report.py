"""One self-contained HTML report of a trained run (``attnkit report RUN_DIR``).

The page holds the configuration, the training history from ``metrics.json``, the test scores
with their sacreBLEU signatures (Post 2018), BLEU by source length as a table and a plot
(Bahdanau et al. 2015, Fig. 2), a Transformer's position term per head, and attention
heatmaps of a few test translations. Pictures are
inlined as base64 PNG and the style sheet sits in the page: it has no links, scripts or fonts
to fetch, so it opens offline and can be mailed as one file.
"""

from __future__ import annotations

import base64
import html
import tempfile
from pathlib import Path

from attnkit.apps.translation.run import load_run
from attnkit.apps.translation.translate import translate_texts
from attnkit.config import to_dict
from attnkit.engine.rundir import RunDir
from attnkit.interpret.heatmap import plot_heads, plot_heatmap
from attnkit.interpret.structure import from_translation

STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; }
th { background: #eee; } tr.best { font-weight: bold; } code { font-size: 0.85em; }
.sections { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
img { max-width: 100%; }
"""


def write_report(
    run_dir: str | Path, out_path: str | Path, evaluation=None, n_examples: int = 3
) -> Path:
    """Write the HTML report of ``run_dir`` to ``out_path``; returns ``out_path``.

    ``evaluation`` is an :class:`~attnkit.apps.translation.evaluate.Evaluation` of the run
    (computed on the
    test split with the run's decoding settings when None). ``n_examples`` of its sentences, at
    evenly spaced quantiles of source length, are shown with heatmaps of the top layer's
    cross-attention (head mean, and each head when there are several). Translations without
    weights are decoded again with the best checkpoint and ``evaluation.beam_size``.
    """
    run = RunDir(run_dir)
    cfg, tokenizer, model = load_run(run.root)
    if evaluation is None:
        from attnkit.apps.translation.evaluate import evaluate_run

        evaluation = evaluate_run(run.root, "test")
    picked = _pick(evaluation.translations, n_examples)
    translations = [evaluation.translations[i] for i in picked]
    if any(t.attention is None for t in translations):
        sources = [t.source for t in translations]
        translations = translate_texts(
            model, tokenizer, sources, cfg.decode, beam_size=evaluation.beam_size, need_weights=True
        )
    with tempfile.TemporaryDirectory() as tmp:
        body = [
            f"<h1>attnkit run report: {_e(cfg.name)}</h1>",
            f"<p>Run directory <code>{_e(run.root.resolve())}</code>.</p>",
            _config(cfg, run.read_metrics()),
            _history(run.read_metrics()),
            _scores(evaluation),
            _by_length(cfg.name, evaluation, Path(tmp)),
            _position_term(cfg, run.root, evaluation, Path(tmp)),
            _examples(evaluation, picked, translations, Path(tmp)),
        ]
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>attnkit report: {_e(cfg.name)}</title><style>{STYLE}</style></head>"
        "<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(page, encoding="utf-8")
    return out_path


def _e(value) -> str:
    return html.escape(str(value))


def _table(header: list[str], rows: list[list], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    lines = [f"<table><tr>{head}</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        lines.append(f"<tr{cls}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    return "\n".join(lines) + "</table>"


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}">'


def _pick(translations, n: int) -> list[int]:
    """``n`` sentence indices at evenly spaced quantiles of source length (no extremes)."""
    order = sorted(range(len(translations)), key=lambda i: len(translations[i].source.split()))
    picks = [order[(k + 1) * len(order) // (n + 1)] for k in range(n)] if order else []
    return list(dict.fromkeys(picks))


def _config(cfg, metrics: dict) -> str:
    sections = []
    for name, values in to_dict(cfg).items():
        if isinstance(values, dict):
            rows = [[k, _fmt(v)] for k, v in values.items()]
            sections.append(f"<div><h3>{_e(name)}</h3>{_table(['key', 'value'], rows)}</div>")
    params = metrics.get("n_parameters")
    extra = f"<p>{params:,} parameters.</p>" if params else ""
    return f"<h2>Configuration</h2>{extra}<div class='sections'>{''.join(sections)}</div>"


def _history(metrics: dict) -> str:
    history = metrics.get("history") or []
    if not history:
        return "<h2>Training history</h2><p>No metrics.json history in this run.</p>"
    keys = ["epoch", *dict.fromkeys(k for h in history for k in h if k != "epoch")]
    rows = [[_fmt(h.get(k)) for k in keys] for h in history]
    best = metrics.get("best_epoch")
    classes = ["best" if h.get("epoch") == best else "" for h in history]
    note = f"<p>Best epoch (bold): {_e(best)}.</p>" if best is not None else ""
    return f"<h2>Training history</h2>{note}{_table(keys, rows, classes)}"


def _scores(evaluation) -> str:
    s = evaluation.scores
    rows = [
        ["BLEU", f"{s.bleu:.2f}", s.bleu_signature],
        ["chrF", f"{s.chrf:.2f}", s.chrf_signature],
    ]
    return (
        f"<h2>Scores on {_e(evaluation.split)}</h2><p>{s.n_sentences} sentences, beam size "
        f"{evaluation.beam_size}.</p>{_table(['metric', 'score', 'sacreBLEU signature'], rows)}"
    )


def _by_length(name: str, evaluation, tmp: Path) -> str:
    from attnkit.apps.translation.compare import Compared, plot_by_length

    rows = evaluation.by_length
    table = _table(
        ["source words", "sentences", "BLEU"],
        [[r["bucket"], r["n"], f"{r['bleu']:.2f}"] for r in rows],
    )
    picture = ""
    if rows:  # plot_by_length reads only the name and evaluation.by_length
        path = plot_by_length([Compared(name, None, evaluation)], tmp / "by_length.png")
        picture = _img(path, "BLEU by source length")
    return f"<h2>BLEU by source length</h2>{table}{picture}"


def _position_term(cfg, root: Path, evaluation, tmp: Path) -> str:
    """The position term of the first encoder layer per head (Transformer runs with positions)."""
    if cfg.model.arch != "transformer" or cfg.model.positions == "none":
        return ""
    from attnkit.apps.translation.position_terms import plot_position_terms

    sources = [t.source for t in evaluation.translations]
    runs = {cfg.model.positions: root}
    picture = plot_position_terms(runs, tmp / "positions.png", sources=sources)
    note = (
        "<p>What the positions alone add to the scores of encoder layer 0, query rows by key "
        "columns (see <code>attnkit.apps.translation.position_terms</code>).</p>"
    )
    return f"<h2>Position term ({_e(cfg.model.positions)})</h2>{note}{_img(picture, 'positions')}"


def _heatmaps(translation, tmp: Path, key: str) -> str:
    if not translation.attention or not translation.attention[0]:
        return "<p>This model has no attention to draw (no attention weights recorded).</p>"
    record = from_translation(translation)
    if "cross" not in record.stacks:
        return f"<p>No cross-attention recorded (only {_e(', '.join(record.names))}).</p>"
    weights = record["cross"][-1]  # (H, T_out, S), the top layer
    outputs, sources = record.labels["cross"]
    layer = f"layer {len(record['cross']) - 1}, " if len(record["cross"]) > 1 else ""
    heads = weights.shape[0]
    title = f"cross-attention ({layer}mean of {heads} heads)" if heads > 1 else "attention"
    parts = [
        _img(plot_heatmap(weights.mean(0), sources, outputs, tmp / f"{key}.png", title), title)
    ]
    if heads > 1:
        path = plot_heads(weights, outputs, sources, tmp / f"{key}-heads.png", f"{layer}heads")
        parts.append(_img(path, "cross-attention per head"))
    return "".join(parts)


def _examples(evaluation, picked: list[int], translations, tmp: Path) -> str:
    parts = ["<h2>Sample translations</h2>"]
    for k, (i, t) in enumerate(zip(picked, translations, strict=True)):
        rows = [
            ["source", t.source],
            ["reference", evaluation.references[i]],
            ["output", t.text],
        ]
        parts.append(f"<h3>Test sentence {i}</h3>{_table(['', 'text'], rows)}")
        parts.append(_heatmaps(t, tmp, f"example{k}"))
    return "\n".join(parts)
