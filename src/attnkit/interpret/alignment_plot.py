"""Alignment pictures: attention maps side by side, each with its argmax links and the gold.

Each panel is a ``(T, S)`` word-level attention map (rows the target words, columns the source
words, as :func:`attnkit.interpret.heatmap.plot_heatmap`). On it, a cross marks each row's
argmax (the hard alignment read from that map, :func:`~attnkit.interpret.alignments.argmax_links`)
and, with a gold :class:`~attnkit.interpret.alignments.Alignment`, a square frames each sure
link and a dot marks each possible one, so a reader sees at once where attention and truth
agree. Typical panels: a run's raw cross-attention, its Shift-Att reading (Chen et al. 2020)
and a guided head (Garg et al. 2019).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from attnkit.interpret.alignments import Alignment, argmax_links
from attnkit.interpret.heatmap import _check_format, _save, _show, _ticks, as_array, plt


def marks(weights, gold: Alignment | None = None) -> dict[str, list[tuple[int, int]]]:
    """The ``(row, column)`` cells a panel marks: ``"argmax"`` of each row, and the gold's
    ``"sure"`` and ``"possible"``-only links (gold links are ``(source, target)``)."""
    out = {"argmax": sorted((j, i) for i, j in argmax_links(weights))}
    if gold is not None:
        out["sure"] = sorted((j, i) for i, j in gold.sure)
        out["possible"] = sorted((j, i) for i, j in gold.possible - gold.sure)
    return out


def plot_alignments(
    maps: Mapping[str, object],
    src_words: Sequence[str],
    tgt_words: Sequence[str],
    path: str | Path,
    gold: Alignment | None = None,
    title: str = "",
) -> Path:
    """Save one panel per ``maps`` entry (``{panel title: weights (T, S)}``) to ``path``."""
    path = _check_format(path)
    arrays = {name: as_array(w) for name, w in maps.items()}
    for name, w in arrays.items():
        if w.shape != (len(tgt_words), len(src_words)):
            raise ValueError(
                f"{name}: weights of shape {w.shape} for {len(tgt_words)} target and "
                f"{len(src_words)} source words"
            )
    cell = (max(2.5, 0.3 * len(src_words) + 1.2), max(2.5, 0.3 * len(tgt_words) + 1.2))
    fig, axes = plt.subplots(
        1,
        len(arrays),
        figsize=(cell[0] * len(arrays), cell[1]),
        squeeze=False,
        layout="constrained",
    )
    for k, (ax, (name, w)) in enumerate(zip(axes[0], arrays.items(), strict=True)):
        _show(ax, w, float(w.max()))
        _ticks(ax, tgt_words, src_words, rows=k == 0, size=7)
        cells = marks(w, gold)
        style = {"sure": ("s", "none", "#d62728"), "possible": ("o", "#d62728", "#d62728")}
        for kind, (marker, face, edge) in style.items():
            rows = cells.get(kind, [])
            if rows:
                ys, xs = zip(*rows, strict=True)
                ax.scatter(
                    xs,
                    ys,
                    marker=marker,
                    s=60 if kind == "sure" else 8,
                    facecolors=face,
                    edgecolors=edge,
                    linewidths=1.2,
                    label=f"gold {kind}",
                )
        ys, xs = zip(*cells["argmax"], strict=True) if cells["argmax"] else ((), ())
        ax.scatter(xs, ys, marker="x", s=22, color="#ff7f0e", linewidths=1.2, label="argmax")
        ax.set_title(name, fontsize=8)
    axes[0][0].legend(loc="upper left", bbox_to_anchor=(0, -0.25), fontsize=7, ncol=3)
    if title:
        fig.suptitle(title, fontsize=9)
    return _save(fig, path)
