"""Attention maps over the input image: a patch grid per image, drawn red over the picture.

A Vision Transformer (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words", eq. (1)) reads
``N = grid * grid`` patches after one or more prefix tokens: the class token, DeiT's
distillation token (Touvron et al. 2021, §4), a ViT's registers (Darcet et al. 2024). A class
token's row of attention, or of the attention rollout (Abnar & Zuidema 2020, §3.1), has a weight
per token; :func:`patch_grid` keeps the patches' and lays them out as the image's grid, and
:func:`plot_image_maps` draws a grid of images, each with its map over it (red, its opacity the
map scaled to [0, 1] per image). Both attnkit's own models and Hugging Face ones use them.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from attnkit.interpret.heatmap import as_array

FORMATS = (".png", ".svg", ".pdf")
OPACITY = 0.7  # the hottest patch's overlay opacity; the coldest is transparent


def patch_grid(weights, prefix: int = 1, query: int = 0) -> np.ndarray:
    """The patches' share of one token's attention, as the image's ``(grid, grid)``.

    Args:
        weights: ``(T, T)`` (an attention rollout, Abnar & Zuidema 2020, eq. (1), or one
            layer's head-mean weights; row ``query`` is read) or one row ``(T,)``, where
            ``T = prefix + grid * grid``.
        prefix: the tokens before the patches (1: the class token; 2: DeiT's class and
            distillation tokens; more with registers), dropped.
        query: the row of a ``(T, T)`` input (0: the class token).

    Raises ``ValueError`` when the patch count ``T - prefix`` is not a square.
    """
    w = as_array(weights)
    if w.ndim == 2:
        if w.shape[0] != w.shape[1]:
            raise ValueError(f"expected (T, T) self-attention or one row (T,), got {w.shape}")
        if not 0 <= query < w.shape[0]:
            raise ValueError(f"query {query} is not a token of the {w.shape[0]} tokens")
        w = w[query]  # (T,)
    if w.ndim != 1:
        raise ValueError(f"expected (T, T) self-attention or one row (T,), got {w.shape}")
    if not 0 <= prefix < w.shape[0]:
        raise ValueError(f"prefix {prefix}: there are only {w.shape[0]} tokens")
    patches = w[prefix:]  # (grid * grid,)
    grid = math.isqrt(patches.shape[0])
    if grid * grid != patches.shape[0]:
        raise ValueError(
            f"{patches.shape[0]} patch tokens ({w.shape[0]} tokens less {prefix} prefix "
            "tokens) is not a square grid: check the number of prefix tokens (class, "
            "distillation, registers) or give a square image"
        )
    return patches.reshape(grid, grid)  # (grid * grid,) -> (grid, grid)


def picture_path(path: str | Path) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it ends in .png, .svg or .pdf (else a one-line
    ``ValueError``), checked before any work is done."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use .png, .svg or .pdf")
    return path


def _image(image) -> np.ndarray:
    """One image ``(C, H, W)`` (C = 1 or 3) or ``(H, W)`` as ``(H, W)`` or ``(H, W, 3)``."""
    a = as_array(image)
    if a.ndim == 3 and a.shape[0] in (1, 3):
        a = a.transpose(1, 2, 0)  # (C, H, W) -> (H, W, C)
        return a[..., 0] if a.shape[-1] == 1 else a  # (H, W) or (H, W, 3)
    if a.ndim == 2:
        return a
    raise ValueError(f"expected an image (C, H, W) with C = 1 or 3, or (H, W), got {a.shape}")


def overlay(heat_map, opacity: float = OPACITY) -> np.ndarray:
    """The red overlay ``(gh, gw, 4)`` (RGBA) of one map: opacity ``opacity * heat``, where
    ``heat`` is the map scaled to [0, 1] (a constant map is transparent)."""
    m = as_array(heat_map)
    low, high = m.min(), m.max()
    heat = (m - low) / max(high - low, 1e-12)  # (gh, gw) in [0, 1]
    rgba = np.zeros((*heat.shape, 4))  # (gh, gw, RGBA): red, opacity ~ the map
    rgba[..., 0], rgba[..., 3] = 1.0, opacity * heat
    return rgba


def _panel(ax, image: np.ndarray, heat_map, cmap: str, opacity: float) -> None:
    """One image with its map stretched over it (each patch a block of pixels)."""
    h, w = image.shape[:2]
    extent = (0, w, h, 0)
    ax.imshow(np.clip(image, 0.0, 1.0), cmap=cmap, vmin=0.0, vmax=1.0, extent=extent)
    ax.imshow(overlay(heat_map, opacity), extent=extent, interpolation="nearest")


def plot_image_maps(
    images: Sequence,
    maps: Sequence,
    path: str | Path,
    *,
    titles: Sequence[str] | None = None,
    title_colors: Sequence[str] | None = None,
    suptitle: str | None = None,
    columns: int = 8,
    cmap: str = "gray",
    opacity: float = OPACITY,
) -> Path:
    """A grid of images, each with its attention map over it in red (PNG, SVG or PDF).

    Args:
        images: ``N`` images ``(C, H, W)`` (C = 1 or 3) or ``(H, W)``, values in [0, 1]
            (an ``(N, C, H, W)`` tensor or array will do); ``cmap`` colours one channel.
        maps: ``N`` maps ``(gh, gw)`` (e.g. :func:`patch_grid` of a rollout, Abnar & Zuidema
            2020), each stretched over its image and scaled to [0, 1]: the redder, the larger
            that patch's share.
        titles, title_colors: one each per image (default: none; black).
        columns: panels a row at most.

    Returns the path written.
    """
    path = picture_path(path)
    shown = [_image(image) for image in images]
    if len(shown) != len(maps) or not shown:
        raise ValueError(
            f"give one map per image and at least one: {len(shown)} images, {len(maps)} maps"
        )
    for name, values in (("titles", titles), ("title_colors", title_colors)):
        if values is not None and len(values) != len(shown):
            raise ValueError(f"{name}: {len(values)} given for {len(shown)} images")
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    cols = min(columns, len(shown))
    rows = math.ceil(len(shown) / cols)
    width = max(1.5 * cols, 4.5 if suptitle else 0.0)  # inches; a title needs some room
    lines = textwrap.wrap(suptitle or "", int(width * 11))  # about 11 characters an inch
    height = 1.75 * rows + 0.2 + 0.2 * max(len(lines), 1)
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for i, ax in enumerate(axes.flat[: len(shown)]):
        _panel(ax, shown[i], maps[i], cmap, opacity)
        if titles is not None:
            color = "black" if title_colors is None else title_colors[i]
            ax.set_title(titles[i], fontsize=9, color=color)
    if lines:
        fig.suptitle("\n".join(lines), fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
