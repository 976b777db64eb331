"""What a speech run adds to the generic run report (``attnkit report RUN_DIR``,
:mod:`attnkit.interpret.run_report`): the scores of every split ``attnkit evaluate`` has scored
(``RUN/evaluation-SPLIT.json``), and examples: validation utterances with the truth, the greedy
transcript and the attention of every output token over the frames (Chan et al. 2016, Fig. 3).
"""

from __future__ import annotations

from pathlib import Path

from attnkit.apps.speech.data import load_split
from attnkit.apps.speech.views import plot_speech_attention
from attnkit.interpret import report_page as rp
from attnkit.interpret.run_report import png_bytes
from attnkit.results import Shown

SCORES = ("wer", "cer", "der", "monotonicity")


def evaluated_scores(root: Path) -> str:
    """A row per split scored by ``attnkit evaluate``, or how to score one."""
    return rp.evaluated_section(
        root, ["split", "utterances", "beam", *SCORES],
        lambda r: [[r["split"], r["n"], r["beam"], *(rp.fmt(r.get(k)) for k in SCORES)]],
    )  # fmt: skip


def transcripts_shown(run, names, features, truths=None) -> list[Shown]:
    """Each utterance's features ``(frames, F)`` transcribed greedily, with a picture of its
    attention (CTC-only runs: the features alone); ``truths``: the true texts, where known."""
    found = run.transcribe(features, beam=1, attention=run.model.speller is not None)
    shown = []
    for k, (name, f, t) in enumerate(zip(names, features, found, strict=True)):
        truth = None if truths is None else truths[k]
        verdict = "" if truth is None else (" (right)" if t.text == truth else " (wrong)")
        picture = png_bytes(
            lambda path, f=f, t=t, title=f"{name}: {t.text!r}{verdict}": plot_speech_attention(
                f, t.tokens, t.attention, path, reduction=run.model.reduction, title=title
            )
        )
        details = {} if truth is None else {"truth": truth}
        shown.append(Shown(name, t.text or "(nothing)", picture=picture, details=details))
    return shown


def validation_shown(run, n: int) -> list[Shown]:
    """The first ``n`` validation utterances, transcribed."""
    valid = load_split(run.config.data, "valid")
    k = min(n, len(valid))
    return transcripts_shown(run, valid.names[:k], valid.features[:k], valid.texts[:k])
