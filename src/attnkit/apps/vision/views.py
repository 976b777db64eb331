"""Pictures of a trained Vision Transformer: each image with its class token's attention
rollout (Abnar & Zuidema 2020) over it (``attnkit rollout``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from attnkit.apps.vision.data import ImageSet
from attnkit.apps.vision.model import ViT


def plot_rollout(
    model: ViT, data: ImageSet, path: str | Path, count: int = 16, residual: float = 0.5
) -> Path:
    """A grid of the first ``count`` images with their rollout maps over them (PNG/SVG/PDF)."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use .png, .svg or .pdf")
    sub = data.subset(np.arange(min(count, len(data))))
    pred = model.predict(sub.images, residual)
    cols = min(8, len(sub))
    rows = math.ceil(len(sub) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(1.5 * cols, 1.75 * rows + 0.4), squeeze=False)
    size = model.config.image_size
    for ax in axes.flat:
        ax.axis("off")
    for i, ax in enumerate(axes.flat[: len(sub)]):
        image = sub.images[i].permute(1, 2, 0).numpy()  # (S, S, C)
        ax.imshow(
            image.squeeze(-1) if image.shape[-1] == 1 else image,
            cmap="gray_r",
            extent=(0, size, size, 0),
        )
        low, high = pred.maps[i].min(), pred.maps[i].max()
        heat = (pred.maps[i] - low) / max(high - low, 1e-12)  # (grid, grid) in [0, 1]
        overlay = np.zeros((*heat.shape, 4))  # (grid, grid, RGBA): red, opacity ~ rollout
        overlay[..., 0], overlay[..., 3] = 1.0, 0.7 * heat
        ax.imshow(overlay, extent=(0, size, size, 0), interpolation="nearest")
        truth, guess = sub.names[int(sub.labels[i])], sub.names[int(pred.classes[i])]
        ax.set_title(f"{truth}→{guess}", fontsize=9, color="black" if truth == guess else "red")
    fig.suptitle(
        "class-token attention rollout: the redder, the larger the patch's share (scaled per "
        "image; title: true→predicted)",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
