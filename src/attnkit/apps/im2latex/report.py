"""What an image-to-LaTeX run adds to the generic run report (``attnkit report RUN_DIR``,
:mod:`attnkit.interpret.run_report`): the scores of every split that ``attnkit evaluate`` has
scored (``RUN/evaluation-SPLIT.json``), and its examples: a few validation formulas with the
truth, the greedy reading and the attention of every output step over the image, as Deng et
al. (2017, Fig. 1) and Xu et al. (2015, Figs. 2-3) draw it.
"""

from __future__ import annotations

import json
from pathlib import Path

from attnkit.apps.im2latex.app import SCORES
from attnkit.apps.im2latex.sets import validation_set
from attnkit.apps.im2latex.views import plot_formula_attention
from attnkit.interpret import report_page as rp
from attnkit.interpret.run_report import png_bytes
from attnkit.results import Shown


def evaluated_scores(root: Path) -> str:
    """A row per split scored by ``attnkit evaluate``, or how to score one."""
    found = sorted(Path(root).glob("evaluation-*.json"))
    title = "<h2>Scores of every split evaluated</h2>"
    if not found:
        return (
            f"{title}<p>No split scored yet: <code>attnkit evaluate "
            f"{rp.escape(root)} --split test</code>.</p>"
        )
    rows = []
    for path in found:
        row = json.loads(path.read_text(encoding="utf-8"))
        rows.append([row["split"], row["n"], row["beam"], *(rp.fmt(row.get(k)) for k in SCORES)])
    return title + rp.table(["split", "formulas", "beam", *SCORES], rows)


def reading_shown(run, names, images, truths=None) -> list[Shown]:
    """Each image ``(H, W)`` (1 = ink) read greedily, a panel per output token with its
    step's attention over the image; ``truths``: the true tokens, where known."""
    readings = run.read(images, beam=1, attention=True)
    shown = []
    for k, (name, image, reading) in enumerate(zip(names, images, readings, strict=True)):
        truth = None if truths is None else truths[k]
        verdict = (
            ""
            if truth is None
            else (" (read correctly)" if reading.tokens == truth else " (misread)")
        )
        picture = png_bytes(
            lambda path, im=image, r=reading, t=f"{name}{verdict}": plot_formula_attention(
                im, r.tokens, r.attention, path, stride=run.model.stride, title=t
            )
        )
        details = {} if truth is None else {"truth": " ".join(truth)}
        shown.append(Shown(name, " ".join(reading.tokens), picture=picture, details=details))
    return shown


def validation_shown(run, n: int) -> list[Shown]:
    """The first ``n`` validation formulas, read."""
    valid = validation_set(run.config.data)
    k = min(n, len(valid))
    return reading_shown(run, valid.names[:k], valid.images[:k], valid.formulas[:k])
