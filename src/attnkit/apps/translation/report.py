"""One self-contained HTML report of a trained run (``attnkit report RUN_DIR``).

The page holds the configuration, the training history from ``metrics.json``, the test scores
with their sacreBLEU signatures (Post 2018), BLEU by source length as a table and a plot
(Bahdanau et al. 2015, Fig. 2), a Transformer's position term per head, and attention
heatmaps of a few test translations. Pictures are
inlined as base64 PNG and the style sheet sits in the page: it has no links, scripts or fonts
to fetch, so it opens offline and can be mailed as one file.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from attnkit.apps.translation.decode.records import from_translation
from attnkit.apps.translation.decode.run import load_run
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.engine.rundir import RunDir
from attnkit.interpret import report_page as rp
from attnkit.interpret.heatmap import plot_heads, plot_heatmap


def write_report(
    run_dir: str | Path, out_path: str | Path, evaluation=None, n_examples: int = 3
) -> Path:
    """Write the HTML report of ``run_dir`` to ``out_path``; returns ``out_path``.

    ``evaluation`` is an :class:`~attnkit.apps.translation.decode.evaluate.Evaluation` of the run
    (computed on the
    test split with the run's decoding settings when None). ``n_examples`` of its sentences, at
    evenly spaced quantiles of source length, are shown with heatmaps of the top layer's
    cross-attention (head mean, and each head when there are several). Translations without
    weights are decoded again with the best checkpoint and ``evaluation.beam_size``.
    """
    run = RunDir(run_dir)
    cfg, tokenizer, model = load_run(run.root)
    if evaluation is None:
        from attnkit.apps.translation.decode.evaluate import evaluate_run

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
            f"<h1>attnkit run report: {rp.escape(cfg.name)}</h1>",
            f"<p>Run directory <code>{rp.escape(run.root.resolve())}</code>.</p>",
            rp.config_section(cfg, run.read_metrics()),
            rp.history_section(run.read_metrics()),
            _scores(evaluation),
            _by_length(cfg.name, evaluation, Path(tmp)),
            _position_term(cfg, run.root, evaluation, Path(tmp)),
            _examples(evaluation, picked, translations, Path(tmp)),
        ]
    return rp.write_page(out_path, cfg.name, body)


def _pick(translations, n: int) -> list[int]:
    """``n`` sentence indices at evenly spaced quantiles of source length (no extremes)."""
    order = sorted(range(len(translations)), key=lambda i: len(translations[i].source.split()))
    picks = [order[(k + 1) * len(order) // (n + 1)] for k in range(n)] if order else []
    return list(dict.fromkeys(picks))


def _scores(evaluation) -> str:
    s = evaluation.scores
    rows = [
        ["BLEU", f"{s.bleu:.2f}", s.bleu_signature],
        ["chrF", f"{s.chrf:.2f}", s.chrf_signature],
    ]
    return (
        f"<h2>Scores on {rp.escape(evaluation.split)}</h2><p>{s.n_sentences} sentences, beam size "
        f"{evaluation.beam_size}.</p>{rp.table(['metric', 'score', 'sacreBLEU signature'], rows)}"
    )


def _by_length(name: str, evaluation, tmp: Path) -> str:
    from attnkit.apps.translation.experiments.compare import Compared, plot_by_length

    rows = evaluation.by_length
    table = rp.table(
        ["source words", "sentences", "BLEU"],
        [[r["bucket"], r["n"], f"{r['bleu']:.2f}"] for r in rows],
    )
    picture = ""
    if rows:  # plot_by_length reads only the name and evaluation.by_length
        path = plot_by_length([Compared(name, None, evaluation)], tmp / "by_length.png")
        picture = rp.image(path, "BLEU by source length")
    return f"<h2>BLEU by source length</h2>{table}{picture}"


def _position_term(cfg, root: Path, evaluation, tmp: Path) -> str:
    """The position term of the first encoder layer per head (Transformer runs with positions)."""
    if cfg.model.arch != "transformer" or cfg.model.positions == "none":
        return ""
    from attnkit.apps.translation.experiments.position_terms import plot_position_terms

    sources = [t.source for t in evaluation.translations]
    runs = {cfg.model.positions: root}
    picture = plot_position_terms(runs, tmp / "positions.png", sources=sources)
    note = (
        "<p>What the positions alone add to the scores of encoder layer 0, query rows by key "
        "columns (see <code>attnkit.apps.translation.experiments.position_terms</code>).</p>"
    )
    title = f"<h2>Position term ({rp.escape(cfg.model.positions)})</h2>"
    return f"{title}{note}{rp.image(picture, 'positions')}"


def _heatmaps(translation, tmp: Path, key: str) -> str:
    if not translation.attention or not translation.attention[0]:
        return "<p>This model has no attention to draw (no attention weights recorded).</p>"
    record = from_translation(translation)
    if "cross" not in record.stacks:
        return f"<p>No cross-attention recorded (only {rp.escape(', '.join(record.names))}).</p>"
    weights = record["cross"][-1]  # (H, T_out, S), the top layer
    outputs, sources = record.labels["cross"]
    layer = f"layer {len(record['cross']) - 1}, " if len(record["cross"]) > 1 else ""
    heads = weights.shape[0]
    title = f"cross-attention ({layer}mean of {heads} heads)" if heads > 1 else "attention"
    parts = [
        rp.image(plot_heatmap(weights.mean(0), sources, outputs, tmp / f"{key}.png", title), title)
    ]
    if heads > 1:
        path = plot_heads(weights, outputs, sources, tmp / f"{key}-heads.png", f"{layer}heads")
        parts.append(rp.image(path, "cross-attention per head"))
    return "".join(parts)


def _examples(evaluation, picked: list[int], translations, tmp: Path) -> str:
    parts = ["<h2>Sample translations</h2>"]
    for k, (i, t) in enumerate(zip(picked, translations, strict=True)):
        rows = [
            ["source", t.source],
            ["reference", evaluation.references[i]],
            ["output", t.text],
        ]
        parts.append(f"<h3>Test sentence {i}</h3>{rp.table(['', 'text'], rows)}")
        parts.append(_heatmaps(t, tmp, f"example{k}"))
    return "\n".join(parts)
