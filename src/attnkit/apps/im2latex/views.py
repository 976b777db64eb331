"""Where the decoder looks while it writes a formula: one panel per output token with that
step's attention over the image (as Deng et al. 2017, Fig. 1, and Xu et al. 2015, Figs. 2-3,
draw it). The grid map is spread over its cells' pixels (each cell covers ``stride`` pixels),
so a panel shows exactly which cells the step attended."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def on_image(weights: np.ndarray, shape: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """A grid map ``(r, c)`` as an image ``shape`` (each cell repeated over its pixels),
    scaled to a maximum of 1."""
    full = np.kron(weights, np.ones(stride))[: shape[0], : shape[1]]  # (H, W)
    top = full.max()
    return full / top if top > 0 else full


def attention_centres(maps: np.ndarray, stride: tuple[int, int]) -> np.ndarray:
    """Per step, the attention's centre of mass in pixels ``(T, 2)`` as (row, column): the
    reading position, which moves left to right along a formula when attention works."""
    t, r, c = maps.shape
    rows = (np.arange(r) + 0.5) * stride[0]
    cols = (np.arange(c) + 0.5) * stride[1]
    mass = maps.sum((1, 2)).clip(1e-12)  # (T,)
    return np.stack([(maps.sum(2) @ rows) / mass, (maps.sum(1) @ cols) / mass], 1)


def plot_formula_attention(
    image: np.ndarray,
    tokens: Sequence[str],
    maps: np.ndarray,
    path: str | Path,
    *,
    stride: tuple[int, int],
    title: str | None = None,
    max_tokens: int = 30,
) -> Path:
    """Write the image and, for each of the first ``max_tokens`` output tokens (then EOS), the
    attention of its step over the image. ``image (H, W)`` (1 = ink), ``maps (T, r, c)``."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use .png, .svg or .pdf")
    words = [*tokens, "</s>"][: min(max_tokens, len(maps))]
    cols = 3
    rows = 1 + -(-len(words) // cols)
    h, w = image.shape
    width = 3.2 * cols
    height = rows * ((width / cols) * h / w + 0.35)
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    top = fig.add_subplot(rows, 1, 1)
    top.imshow(1 - image, cmap="gray", vmin=0, vmax=1)
    top.set_title(title or "image", fontsize=8)
    top.axis("off")
    for j, word in enumerate(words):
        ax = axes.flat[cols + j]
        heat = on_image(maps[j], (h, w), stride)
        ax.imshow(1 - image, cmap="gray", vmin=0, vmax=1)
        ax.imshow(np.ma.masked_less(heat, 0.02), cmap="autumn_r", alpha=0.6, vmin=0, vmax=1)
        ax.set_title(word, fontsize=9, family="monospace")
    fig.subplots_adjust(left=0.02, right=0.98, bottom=0.02, top=0.95, wspace=0.06, hspace=0.35)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
