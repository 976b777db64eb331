"""Formula images as model input: fit into the largest size, batch with padding, and the mask
of the feature-grid cells that cover real image.

Deng et al. (2017, §4) group images of similar size into buckets and pad; here a batch is
padded to its largest image, rounded up to the encoder's stride, and the grid mask (True =
may attend, :mod:`attnkit.attention.masks`) keeps attention off the padding. Images follow the
package's convention: ``(H, W)`` float32 in ``[0, 1]``, 1 = ink, 0 = paper, so zero padding is
blank paper.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from PIL import Image


def fit(image: np.ndarray, max_height: int, max_width: int) -> np.ndarray:
    """``image (H, W)`` scaled down (aspect kept, bilinear) to fit ``max_height x
    max_width``; returned unchanged when it already fits."""
    h, w = image.shape
    scale = min(max_height / h, max_width / w, 1.0)
    if scale == 1.0:
        return image.astype(np.float32, copy=False)
    size = (max(1, int(w * scale)), max(1, int(h * scale)))  # PIL's (width, height)
    small = Image.fromarray(image.astype(np.float32), mode="F").resize(size, Image.BILINEAR)
    return np.clip(np.asarray(small, dtype=np.float32), 0.0, 1.0)


def grid_size(height: int, width: int, stride: tuple[int, int]) -> tuple[int, int]:
    """Feature-grid cells ``(rows, columns)`` covering an image of that size."""
    return math.ceil(height / stride[0]), math.ceil(width / stride[1])


def batch(
    images: Sequence[np.ndarray], stride: tuple[int, int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Images ``(B, 1, H, W)`` zero-padded at the right and bottom to the largest, rounded up
    to ``stride``, and the grid mask ``(B, R * C)`` (row-major), True at cells that cover a
    real pixel of their image."""
    rows = max(grid_size(*im.shape, stride)[0] for im in images)
    cols = max(grid_size(*im.shape, stride)[1] for im in images)
    out = torch.zeros(len(images), 1, rows * stride[0], cols * stride[1])
    mask = torch.zeros(len(images), rows, cols, dtype=torch.bool)
    for k, im in enumerate(images):
        h, w = im.shape
        out[k, 0, :h, :w] = torch.from_numpy(np.ascontiguousarray(im, dtype=np.float32))
        r, c = grid_size(h, w, stride)
        mask[k, :r, :c] = True
    return out, mask.flatten(1)  # (B, 1, H, W), (B, R * C)


def grid_maps(
    weights: torch.Tensor, height: int, width: int, stride: tuple[int, int]
) -> np.ndarray:
    """One image's attention stripped to its real cells ``(T, r * c)`` (as decoding returns
    it) back on its grid ``(T, r, c)``."""
    r, c = grid_size(height, width, stride)
    return weights.reshape(weights.size(0), r, c).float().cpu().numpy()  # (T, r, c)
