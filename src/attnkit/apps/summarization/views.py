"""Where a summary came from: each output word's attention over the source (See et al. 2017,
Fig. 1 and 7), the word coloured by its generation probability ``p_gen`` (blue: copied,
``p_gen`` near 0; red: generated, near 1), and the coverage after the last word (how much
attention each source word received in all). For ``predict --picture``, the run report and the
served page; and the scores of every split evaluated so far for the report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from attnkit.interpret import report_page as rp
from attnkit.results import Shown

SCORES = ("rouge1", "rouge2", "rougeL", "repeated_trigrams", "copied_words")
MAX_COLUMNS = 60  # source words drawn: those attended most, in source order


def shown_columns(attention: np.ndarray, limit: int = MAX_COLUMNS) -> np.ndarray:
    """The source positions drawn: all of them up to ``limit``, else the ``limit`` with the
    highest peak attention over the output steps, kept in source order. ``attention (T, S)``."""
    s = attention.shape[1]
    if s <= limit:
        return np.arange(s)
    peaks = attention.max(0)  # (S,)
    return np.sort(np.argsort(-peaks, kind="stable")[:limit])


def plot_summary_attention(summary, path: str | Path, title: str = "") -> Path:
    """Write ``summary``'s attention ``(T, S)`` (rows: the summary's words, labelled in the
    colour of their ``p_gen``; columns: the source words shown), ``p_gen`` per word in a strip
    on the right (blue: copied, near 0; red: generated, near 1), and the final coverage in a
    strip below, to ``path`` (.png, .svg or .pdf)."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use .png, .svg or .pdf")
    a = np.asarray(summary.attention)  # (T, S)
    cols = shown_columns(a)
    rows = [*summary.words, "</s>"][: a.shape[0]]
    fig, axes = plt.subplots(
        2,
        2,
        figsize=(min(3.6 + 0.16 * len(cols), 14.6), 2 + 0.18 * len(rows)),
        gridspec_kw={
            "height_ratios": [max(len(rows), 1), 1.2],
            "width_ratios": [max(len(cols), 1), 1.5],
        },
    )
    (top, side), (bottom, corner) = axes
    top.imshow(a[:, cols], cmap="Greys", vmin=0, vmax=max(float(a.max()), 1e-6), aspect="auto")
    top.set_yticks(range(len(rows)), rows, fontsize=6)
    top.set_xticks([])
    p_gen = np.asarray(summary.p_gen, dtype=float)[: len(rows), None]  # (T, 1)
    for label, g in zip(top.get_yticklabels(), p_gen[:, 0], strict=False):
        label.set_color(plt.cm.coolwarm(float(g)))  # blue: copied; red: generated
    top.set_title(title or "attention per summary word", fontsize=8)
    side.imshow(p_gen, cmap="coolwarm", vmin=0, vmax=1, aspect="auto")  # the same colours
    for t, g in enumerate(p_gen[:, 0]):
        side.text(0, t, f"{g:.2f}", ha="center", va="center", fontsize=5)
    side.set_xticks([0], ["p_gen"], fontsize=6)
    side.set_yticks([])
    coverage = np.asarray(summary.coverage)[cols][None, :]  # (1, shown)
    bottom.imshow(coverage, cmap="Oranges", vmin=0, aspect="auto")
    bottom.set_yticks([0], ["coverage"], fontsize=6)
    words = [summary.source[j] for j in cols]
    bottom.set_xticks(range(len(cols)), words, rotation=90, fontsize=6)
    corner.axis("off")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def summaries_shown(summaries: Sequence, inputs: Sequence[str]) -> list[Shown]:
    """Each summary of ``inputs`` with its attention as a record (queries: the summary words,
    keys: the source words) and a picture, and its mean ``p_gen`` and copied words as
    details."""
    import torch

    from attnkit.interpret.run_report import png_bytes
    from attnkit.interpret.structure import AttentionRecord

    shown = []
    for s, given in zip(summaries, inputs, strict=True):
        rows = [*s.words, "</s>"][: len(s.attention)]
        weights = torch.from_numpy(np.asarray(s.attention, dtype=np.float32))[None]  # (1, T, S)
        record = AttentionRecord({"cross": [weights]}, {"cross": (rows, list(s.source))})
        picture = png_bytes(lambda path, s=s: plot_summary_attention(s, path))
        details = {
            "p_gen (mean)": round(float(np.mean(s.p_gen)), 3) if len(s.p_gen) else None,
            "copied unknown words": [w for w, c in zip(s.words, s.copied, strict=True) if c],
        }
        shown.append(Shown(given, s.text or "(nothing)", record, picture, details))
    return shown


def evaluated_scores(root: Path) -> str:
    """A row per split scored by ``attnkit evaluate``, or how to score one."""
    return rp.evaluated_section(
        root,
        [
            "split",
            "papers",
            "beam",
            "ROUGE-1",
            "ROUGE-2",
            "ROUGE-L",
            "repeated 3-grams",
            "copied words",
        ],
        lambda r: [[r["split"], r["n"], r["beam"], *(rp.fmt(r.get(k)) for k in SCORES)]],
    )
