"""Attention heatmaps with matplotlib: rows are output tokens, columns source tokens
(the picture of Bahdanau et al. 2015, Fig. 3)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def plot_heatmap(
    weights,
    src_labels: Sequence[str],
    tgt_labels: Sequence[str],
    path: str | Path,
    title: str = "",
) -> Path:
    """Save a heatmap of ``weights (T_out, S)`` to ``path`` (PNG, SVG or PDF by suffix)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(tgt_labels), len(src_labels)):
        raise ValueError(
            f"weights of shape {w.shape} do not match {len(tgt_labels)} output and "
            f"{len(src_labels)} source labels"
        )
    height = max(2.5, 0.32 * len(tgt_labels) + 1.5)
    width = max(3.0, 0.32 * len(src_labels) + 2.0)
    fig, ax = plt.subplots(figsize=(width, height))
    image = ax.imshow(w, cmap="Greys", vmin=0.0, vmax=max(1e-9, float(w.max())), aspect="auto")
    ax.set_xticks(range(len(src_labels)), src_labels, rotation=90, fontsize=8)
    ax.set_yticks(range(len(tgt_labels)), tgt_labels, fontsize=8)
    ax.set_xlabel("source")
    ax.set_ylabel("output")
    if title:
        ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.04)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_translation(translation, name: str, path: str | Path, head: int | None = None) -> Path:
    """Heatmap of one translation's attention ``name`` (averaged over heads unless ``head``).

    The last output row is the end-of-sentence step, labelled ``</s>``.
    """
    if translation.attention is None or name not in translation.attention[0]:
        raise ValueError(f"the translation has no attention named {name!r}")
    weights = translation.attention[0][name]  # (H, T_out, S)
    w = weights[head] if head is not None else weights.mean(0)  # (T_out, S)
    tgt = list(translation.tgt_pieces[0])
    tgt = (tgt + ["</s>"])[: w.shape[0]]
    return plot_heatmap(w.numpy(), translation.src_pieces, tgt, path, title=translation.text)
