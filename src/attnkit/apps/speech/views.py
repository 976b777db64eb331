"""Where the speller listens: the utterance's features above, and the attention of every output
token over time below (output tokens x frames), as Chan et al. 2016 (Fig. 3) and Chorowski et
al. 2015 (Fig. 2) draw their alignments. Each annotation covers ``2^p`` frames, so the weights
are spread over the frames they stand for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def on_frames(weights: np.ndarray, reduction: int, frames: int) -> np.ndarray:
    """Attention ``(T_out, T')`` over annotations as ``(T_out, frames)``, each annotation's
    weight repeated over its ``reduction`` frames (frames past the last annotation: 0)."""
    spread = np.repeat(weights, reduction, axis=1)[:, :frames]  # (T_out, <= frames)
    return np.pad(spread, ((0, 0), (0, frames - spread.shape[1])))


def plot_speech_attention(
    features: np.ndarray,
    tokens: Sequence[str],
    attention: np.ndarray | None,
    path: str | Path,
    *,
    reduction: int,
    title: str | None = None,
) -> Path:
    """Write the features ``(frames, F)`` and, when given, the attention ``(T_out, T')`` of
    each output token (then EOS) over the frames, to ``path`` (.png, .svg or .pdf)."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use .png, .svg or .pdf")
    rows = 1 if attention is None else 2
    fig, axes = plt.subplots(rows, 1, figsize=(7, 2.2 + 2.4 * (rows - 1)), squeeze=False)
    top = axes[0, 0]
    top.imshow(features.T, aspect="auto", origin="lower", cmap="magma")
    top.set_ylabel("band")
    top.set_title(title or "features", fontsize=8)
    if attention is not None:
        ax = axes[1, 0]
        labels = [*tokens, "</s>"][: len(attention)]
        heat = on_frames(attention, reduction, len(features))  # (T_out, frames)
        ax.imshow(heat, aspect="auto", cmap="Greys", vmin=0, vmax=max(float(heat.max()), 1e-9))
        ax.set_yticks(range(len(labels)), [t if t != " " else "_" for t in labels], fontsize=7)
        ax.set_xlabel("frame (10 ms)")
        ax.set_ylabel("output token")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
