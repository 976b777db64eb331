"""The image sets a segmentation run trains and tests on, as tensors.

``shapes``: generated train / valid / test sets with seeds ``seed``, ``seed + 1``,
``seed + 2`` (:mod:`attnkit.apps.segmentation.shapes`). ``isbi``: the ISBI 2012 EM slices 0-23
to train and 24-29 to test, membrane as foreground, no validation split
(:func:`~attnkit.apps.segmentation.data.load_isbi`). ``folder``: PNG image/mask folders
(:func:`~attnkit.apps.segmentation.data.read_pairs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from attnkit.apps.segmentation.config import SegmentationDataConfig
from attnkit.apps.segmentation.data import default_isbi_dir, load_isbi, read_pairs
from attnkit.apps.segmentation.shapes import generate_shapes
from attnkit.errors import DataError


@dataclass
class ImageMasks:
    """``images (N, C, H, W)`` float32 in [0, 1] and ``masks (N, 1, H, W)`` float32 in {0, 1}."""

    images: Tensor
    masks: Tensor
    names: list[str]

    def __len__(self) -> int:
        return self.images.size(0)

    @classmethod
    def from_arrays(cls, images: np.ndarray, masks: np.ndarray, prefix: str) -> ImageMasks:
        names = [f"{prefix}-{i}" for i in range(len(images))]
        return cls(torch.from_numpy(images).float(), torch.from_numpy(masks).float(), names)

    @classmethod
    def from_samples(cls, samples, source: str) -> ImageMasks:
        """Stack samples of one size; different sizes are an error naming two of them."""
        if not samples:
            raise DataError(f"{source}: no image/mask pairs")
        shapes = {s.image.shape for s in samples}
        if len(shapes) > 1:
            a, b = sorted(shapes)[:2]
            raise DataError(f"{source}: images of different sizes ({a} and {b}); resize them")
        images = np.stack([s.image for s in samples])  # (N, C, H, W)
        masks = np.stack([s.mask for s in samples])  # (N, 1, H, W)
        names = [s.name for s in samples]
        return cls(torch.from_numpy(images).float(), torch.from_numpy(masks).float(), names)


def load_sets(cfg: SegmentationDataConfig) -> dict[str, ImageMasks]:
    """The sets ``cfg`` names: ``train`` always, ``valid`` and ``test`` where there are any."""
    if cfg.source == "shapes":
        sets = {}
        for offset, (split, n) in enumerate(
            zip(("train", "valid", "test"), cfg.sizes, strict=True)
        ):
            if n:
                images, masks = generate_shapes(
                    n, cfg.size, cfg.seed + offset, noise=cfg.noise, clutter=cfg.clutter
                )
                sets[split] = ImageMasks.from_arrays(images, masks, split)
        return sets
    if cfg.source == "isbi":
        root = cfg.data_dir / "isbi-em" if cfg.data_dir is not None else default_isbi_dir()
        size = None if cfg.size == 512 else cfg.size
        return {
            split: ImageMasks.from_samples(
                load_isbi(root, split, size=size, fold=cfg.fold, folds=cfg.folds),
                f"{root} {split}",
            )
            for split in ("train", "test")
        }
    sets = {"train": _folder(cfg.train_images, cfg.train_masks, cfg.foreground)}
    if cfg.test_images is not None and cfg.test_masks is not None:
        sets["test"] = _folder(cfg.test_images, cfg.test_masks, cfg.foreground)
    return sets


def _folder(images, masks, foreground: str) -> ImageMasks:
    return ImageMasks.from_samples(read_pairs(images, masks, foreground=foreground), str(images))
