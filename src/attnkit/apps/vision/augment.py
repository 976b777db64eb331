"""Augmentation for the Vision Transformer: random shifts, rotations and zooms.

Training draws each batch's randomness up front (:meth:`Augmentation.draw`, from a generator
seeded by the run's seed and the epoch) and applies it when the batch is used
(:meth:`Augmentation.apply`), so an epoch's batches and their augmentation are a pure function
of ``(seed, epoch)`` and a run resumed in the middle of an epoch sees the same images as an
uninterrupted one. :func:`random_shift` and :func:`random_rotate_scale` draw and apply at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


def shift(images: Tensor, shifts: Tensor) -> Tensor:
    """Translate image ``b`` by ``shifts[:, b] = (dy, dx)`` pixels, filling with zeros (the
    digits' background): ``(B, C, H, W)`` -> ``(B, C, H, W)``; ``shifts`` is ``(2, B, 1)``."""
    b, c, h, w = images.shape
    s = int(shifts.abs().max()) if shifts.numel() else 0
    padded = torch.nn.functional.pad(images, (s, s, s, s))  # (B, C, H + 2s, W + 2s)
    dy, dx = shifts  # (B, 1) each
    rows = torch.arange(h) + s - dy  # (B, H): output row i reads padded row i + s - dy
    cols = torch.arange(w) + s - dx  # (B, W)
    batch = torch.arange(b)[:, None, None]  # (B, 1, 1)
    out = padded.permute(0, 2, 3, 1)[batch, rows[:, :, None], cols[:, None, :]]  # (B, H, W, C)
    return out.permute(0, 3, 1, 2).contiguous()  # (B, C, H, W)


def rotate_scale(images: Tensor, degrees: Tensor, scales: Tensor) -> Tensor:
    """Rotate image ``b`` about its centre by ``degrees[b]`` (counter-clockwise as displayed,
    as ``torch.rot90``) and zoom it by ``scales[b]`` (bilinear, zeros outside):
    ``(B, C, H, W)`` -> ``(B, C, H, W)``."""
    angle = torch.deg2rad(degrees.float())  # (B,)
    cos, sin = torch.cos(angle) / scales, torch.sin(angle) / scales  # output -> input coordinates
    zero = torch.zeros_like(cos)
    theta = torch.stack([torch.stack([cos, -sin, zero], 1), torch.stack([sin, cos, zero], 1)], 1)
    grid = torch.nn.functional.affine_grid(theta, list(images.shape), align_corners=False)
    return torch.nn.functional.grid_sample(images, grid, align_corners=False)  # (B, C, H, W)


@dataclass
class Augmentation:
    """One batch's random draws: ``shifts (2, B, 1)`` (integer ``dy, dx``) or None, and
    ``degrees (B,)``, ``scales (B,)`` (both None: no rotation or zoom)."""

    shifts: Tensor | None = None
    degrees: Tensor | None = None
    scales: Tensor | None = None

    @classmethod
    def draw(
        cls,
        size: int,
        max_shift: int = 0,
        max_degrees: float = 0.0,
        max_scale: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> Augmentation:
        """Shifts uniform in ``[-max_shift, max_shift]`` per axis, then angles uniform in
        ``[-max_degrees, max_degrees]`` and zooms uniform in ``[1 - max_scale, 1 + max_scale]``,
        one of each per image, drawn from ``generator`` in that order."""
        out = cls()
        if max_shift > 0:
            out.shifts = torch.randint(-max_shift, max_shift + 1, (2, size, 1), generator=generator)
        if max_degrees > 0 or max_scale > 0:
            u = torch.rand(2, size, generator=generator) * 2 - 1  # (2, B) uniform in [-1, 1]
            out.degrees, out.scales = u[0] * max_degrees, 1 + u[1] * max_scale
        return out

    def apply(self, images: Tensor) -> Tensor:
        """The shift, then the rotation and zoom: ``(B, C, H, W)`` -> ``(B, C, H, W)``."""
        if self.shifts is not None:
            images = shift(images, self.shifts)
        if self.degrees is not None:
            images = rotate_scale(images, self.degrees, self.scales)
        return images


def random_shift(images: Tensor, max_shift: int, generator: torch.Generator | None = None):
    """Translate each image by its own ``(dy, dx)``, uniform in ``[-max_shift, max_shift]``:
    ``(B, C, H, W)`` -> ``(B, C, H, W)`` (``images`` itself when ``max_shift`` is 0)."""
    return Augmentation.draw(images.size(0), max_shift, generator=generator).apply(images)


def random_rotate_scale(
    images: Tensor, max_degrees: float, max_scale: float, generator: torch.Generator | None = None
) -> Tensor:
    """:func:`rotate_scale` by angles uniform in ``[-max_degrees, max_degrees]`` and zooms
    uniform in ``[1 - max_scale, 1 + max_scale]``, one pair per image."""
    draws = Augmentation.draw(images.size(0), 0, max_degrees, max_scale, generator)
    return draws.apply(images)
