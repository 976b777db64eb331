"""Pictures of a trained Vision Transformer: each image with its class token's attention
rollout (Abnar & Zuidema 2020) over it (``attnkit vision rollout``), drawn by the core's
:func:`attnkit.interpret.image_maps.plot_image_maps` (which Hugging Face models use too)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnkit.apps.vision.data import ImageSet
from attnkit.apps.vision.model import ViT
from attnkit.interpret.image_maps import picture_path, plot_image_maps

SUPTITLE = (
    "class-token attention rollout: the redder, the larger the patch's share (scaled per "
    "image; title: true→predicted)"
)


def plot_rollout(
    model: ViT, data: ImageSet, path: str | Path, count: int = 16, residual: float = 0.5
) -> Path:
    """A grid of the first ``count`` images with their rollout maps over them (PNG/SVG/PDF)."""
    path = picture_path(path)
    sub = data.subset(np.arange(min(count, len(data))))
    pred = model.predict(sub.images, residual)  # .maps (n, grid, grid)
    truths = [sub.names[int(label)] for label in sub.labels]
    guesses = [sub.names[int(c)] for c in pred.classes]
    return plot_image_maps(
        sub.images,  # (n, C, S, S)
        pred.maps,
        path,
        titles=[f"{t}→{g}" for t, g in zip(truths, guesses, strict=True)],
        title_colors=["black" if t == g else "red" for t, g in zip(truths, guesses, strict=True)],
        suptitle=SUPTITLE,
        cmap="gray_r",
    )
