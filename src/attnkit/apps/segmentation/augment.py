"""Augmentation for segmentation, in training and at test time.

:func:`elastic`: elastic deformation, the augmentation of the U-Net paper (Ronneberger et al.
2015, §3.1): random displacement vectors on a coarse grid (normal, standard deviation ``sigma``
pixels), interpolated bicubically to a smooth per-pixel field that moves image and mask
together. The mask is resampled bilinearly and thresholded at 0.5, so it stays binary.

:func:`dihedral_mean`: test-time augmentation. The U-Net paper's ISBI entry averages the
network's outputs over rotated versions of the input (§4); here the eight flips and quarter
turns of the square (the dihedral group D4), each prediction turned back before averaging.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

DIHEDRAL = [(turns, flip) for turns in range(4) for flip in (False, True)]


def elastic(images: Tensor, masks: Tensor, sigma: float, grid: int, seed: int):
    """``images``, ``masks`` ``(B, C, H, W)`` deformed by one random field per image."""
    b, _, h, w = images.shape
    g = torch.Generator().manual_seed(seed)
    coarse = torch.randn(b, 2, grid, grid, generator=g) * sigma  # pixels, (x, y)
    field = F.interpolate(coarse, size=(h, w), mode="bicubic", align_corners=True)  # (B, 2, H, W)
    to_unit = torch.tensor([2 / (w - 1), 2 / (h - 1)]).view(1, 2, 1, 1)  # pixels -> [-1, 1]
    field = (field * to_unit).to(images.device)
    device = images.device
    ys = torch.linspace(-1, 1, h, device=device)
    xs = torch.linspace(-1, 1, w, device=device)
    ys, xs = torch.meshgrid(ys, xs, indexing="ij")  # (H, W) each
    base = torch.stack([xs, ys], -1)  # (H, W, 2), grid_sample's (x, y) order
    where = base + field.permute(0, 2, 3, 1)  # (B, H, W, 2)
    moved = F.grid_sample(
        images, where, mode="bilinear", padding_mode="reflection", align_corners=True
    )
    moved_masks = F.grid_sample(
        masks, where, mode="bilinear", padding_mode="reflection", align_corners=True
    )
    return moved, (moved_masks > 0.5).to(masks.dtype)


def dihedral_mean(probabilities, images: Tensor) -> Tensor:
    """The mean of ``probabilities(view) (B, 1, H, W)`` over the 8 views of ``images
    (B, C, H, W)``: each view turned ``turns`` quarter turns then flipped left-right, its
    prediction flipped and turned back. Needs ``H`` and ``W`` both valid model sides."""
    total = torch.zeros(())
    for turns, flip in DIHEDRAL:
        view = torch.rot90(images, turns, dims=(-2, -1))  # (B, C, H, W), or (B, C, W, H)
        view = view.flip(-1) if flip else view
        p = probabilities(view)  # (B, 1, same side order as view)
        p = p.flip(-1) if flip else p
        total = total + torch.rot90(p, -turns, dims=(-2, -1))  # back to (B, 1, H, W)
    return total / len(DIHEDRAL)
