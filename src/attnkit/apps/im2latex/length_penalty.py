"""The beam's length penalty, chosen on the validation split (``train.length_penalty: valid``).

Beam search ranks finished formulas by their log-probability divided by the GNMT length
penalty ``((5 + |y|) / 6) ** alpha`` (Wu et al. 2016, eq. (14);
:func:`attnkit.decoding.length_penalty`). With ``alpha = 0`` the sum of log-probabilities
favours short readings: the im2latex review (issue 38) found predictions shorter than the truth
in 156 of 500 generated test formulas and longer in 35, a dropped ``}`` the most frequent
edit. Here each ``alpha`` of ``train.length_penalties`` decodes the validation split (the
``data.valid`` one, which also picked the best epoch) at the run's beam; the highest exact match
wins (then BLEU, then the smaller alpha), and the choice is kept in
``RUN/length-penalty.json`` with every candidate's scores, so evaluation never sees the test
split while choosing.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from attnkit.apps.im2latex.config import Im2LatexConfig

FILE = "length-penalty.json"
log = logging.getLogger(__name__)


def chosen_length_penalty(run) -> float:
    """The run's length penalty: ``train.length_penalty`` when a number, else the validation
    split's choice, computed once and kept in ``RUN/length-penalty.json``."""
    cfg: Im2LatexConfig = run.config
    if cfg.train.length_penalty != "valid":
        return float(cfg.train.length_penalty)
    path = Path(run.path) / FILE
    if path.is_file():
        return float(json.loads(path.read_text(encoding="utf-8"))["chosen"])
    record = choose(run)
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return float(record["chosen"])


def choose(run) -> dict:
    """Decode the validation split once per candidate alpha; the record of the choice."""
    from attnkit.apps.im2latex.reading import read_formulas
    from attnkit.apps.im2latex.scores import formula_scores
    from attnkit.apps.im2latex.sets import validation_set

    cfg: Im2LatexConfig = run.config
    valid = validation_set(cfg.data)
    candidates = {}
    for alpha in cfg.train.length_penalties:
        readings = read_formulas(
            run.model,
            run.vocab,
            valid.images,
            beam=cfg.train.beam,
            max_len=cfg.train.max_len,
            length_penalty=alpha,
        )
        scores = formula_scores([r.tokens for r in readings], valid.formulas, images=False)
        candidates[str(alpha)] = {k: float(v) for k, v in scores.items()}
        log.info("length penalty %.2f on the validation split: %s", alpha, scores)
    best = max(
        cfg.train.length_penalties,
        key=lambda a: (candidates[str(a)]["exact_match"], candidates[str(a)]["bleu"], -a),
    )
    split = "real-valid" if cfg.data.valid == "real" else "valid"
    return {"chosen": best, "split": split, "n": len(valid), "beam": cfg.train.beam,
            "candidates": candidates}  # fmt: skip
