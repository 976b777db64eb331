"""One self-contained HTML report of an image-to-LaTeX run (``attnkit report RUN_DIR``).

The page holds the configuration, the training history, the scores of every split that
``attnkit evaluate`` has scored (``RUN/evaluation-SPLIT.json``), and for a few validation
formulas the image, the truth, the greedy reading and the attention of every output step over
the image, as Deng et al. (2017, Fig. 1) and Xu et al. (2015, Figs. 2-3) draw it. Pictures are
inlined as base64 PNG: nothing to fetch.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from attnkit.apps.im2latex.app import SCORES
from attnkit.apps.im2latex.sets import validation_set
from attnkit.apps.im2latex.views import plot_formula_attention
from attnkit.engine.rundir import RunDir
from attnkit.interpret import report_page as rp


def write_report(run, output: str | Path, *, n_examples: int = 3) -> Path:
    """Write the report of ``run`` (:class:`~attnkit.apps.im2latex.run.Im2LatexRun`) to
    ``output``; returns ``output``."""
    cfg = run.config
    metrics = RunDir(run.path).read_metrics()
    with tempfile.TemporaryDirectory() as tmp:
        body = [
            f"<h1>attnkit im2latex report: {rp.escape(cfg.name)}</h1>",
            f"<p>Run directory <code>{rp.escape(Path(run.path).resolve())}</code>; "
            f"{len(run.vocab)} tokens in the vocabulary.</p>",
            rp.config_section(cfg, metrics),
            rp.history_section(metrics),
            _scores(Path(run.path)),
            _examples(run, n_examples, Path(tmp)),
        ]
    return rp.write_page(output, cfg.name, body)


def _scores(root: Path) -> str:
    """A row per split scored by ``attnkit evaluate``, or how to score one."""
    found = sorted(root.glob("evaluation-*.json"))
    if not found:
        return (f"<h2>Scores</h2><p>No split scored yet: <code>attnkit evaluate "
                f"{rp.escape(root)} --split test</code>.</p>")  # fmt: skip
    rows = []
    for path in found:
        row = json.loads(path.read_text(encoding="utf-8"))
        rows.append([row["split"], row["n"], row["beam"], *(rp.fmt(row.get(k)) for k in SCORES)])
    head = ["split", "formulas", "beam", *SCORES]
    return f"<h2>Scores</h2>{rp.table(head, rows)}"


def _examples(run, n: int, tmp: Path) -> str:
    """The first ``n`` validation formulas read greedily, with each token's attention."""
    valid = validation_set(run.config.data)
    if not len(valid) or n < 1:
        return "<h2>Examples</h2><p>No validation formulas to show.</p>"
    readings = run.read(valid.images[:n], beam=1, attention=True)
    parts = ["<h2>Examples</h2><p>Validation formulas read greedily; each panel is one output "
             "token with its step's attention over the image.</p>"]  # fmt: skip
    for k, reading in enumerate(readings):
        truth = " ".join(valid.formulas[k])
        verdict = "read correctly" if reading.tokens == valid.formulas[k] else "misread"
        path = plot_formula_attention(valid.images[k], reading.tokens, reading.attention,
                                      tmp / f"example-{k}.png", stride=run.model.stride,
                                      title=f"{valid.names[k]} ({verdict})")  # fmt: skip
        parts.append(
            f"<h3>{rp.escape(valid.names[k])}: {verdict}</h3><p>truth <code>{rp.escape(truth)}"
            f"</code><br>read <code>{rp.escape(' '.join(reading.tokens))}</code></p>"
            + rp.image(path, f"attention while reading {valid.names[k]}")
        )
    return "\n".join(parts)
