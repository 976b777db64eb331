"""The configuration of a segmentation run: ``data``, ``model`` and ``train``.

``task: segmentation``; see ``configs/shapes-attention-unet.yaml``. :func:`load_config` rejects
unknown keys and bad values with the file, line and field (:mod:`attnkit.config`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.apps.segmentation.model import UNetConfig
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class SegmentationDataConfig(Checked):
    """Which images: generated shapes (the default), ISBI 2012 EM slices, or a folder."""

    source: Literal["shapes", "isbi", "folder"] = "shapes"
    # shapes: images of similar-intensity shapes where only discs are the target
    sizes: tuple[int, int, int] = bounded((400, 50, 100), ge=0)  # train / valid / test images
    # image side in pixels (shapes; isbi: downsampled to this, 512 = full size)
    size: int = bounded(64, ge=8)
    seed: int = 0
    noise: float = 0.1
    clutter: int = 3
    # isbi: slices 0-23 train, 24-29 test (data_dir/isbi-em; default $ATTNKIT_DATA_DIR or
    # ../shared/data); folder: train and test image/mask folders
    data_dir: Path | None = None
    train_images: Path | None = None
    train_masks: Path | None = None
    test_images: Path | None = None
    test_masks: Path | None = None
    foreground: Literal["white", "black"] = "white"  # folder: which mask value is the target
    # isbi: cross-validation instead of the fixed split: fold k of `folds` tests on the k-th
    # block of 30 / folds contiguous slices and trains on the rest (fold 4 of 5: slices 24-29)
    fold: int | None = None
    folds: int = 5

    def check(self) -> None:
        if self.sizes[0] < 1:
            raise ValueError(f"sizes must leave a training set, got {list(self.sizes)}")
        if self.source == "folder" and (self.train_images is None or self.train_masks is None):
            raise ValueError("source 'folder' needs train_images and train_masks (PNG folders)")
        if self.fold is not None:
            if self.source != "isbi":
                raise ValueError("fold and folds cross-validate the ISBI slices (source: isbi)")
            from attnkit.apps.segmentation.data import isbi_slices

            isbi_slices("test", self.fold, self.folds)  # names the bad value


@dataclass
class SegmentationTrainConfig(TrainSettings):
    """The engine's settings with segmentation's defaults and its own fields."""

    epochs: int = 30
    learning_rate: float = 2e-3
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: Schedule = "constant"
    clip_norm: float = 0.0
    patience: int = 100  # keep training: the last epoch is usually the best here
    seed: int = 0
    batch_size: int = bounded(8, ge=1)
    # loss = BCE + dice_weight * soft Dice loss (Milletari et al. 2016)
    dice_weight: float = bounded(1.0, ge=0)
    # U-Net's border-weighted BCE (Ronneberger et al. 2015, eq. 2): each pixel's BCE times
    # w = w_c + border_weight * exp(-(d1 + d2)^2 / (2 border_sigma^2)), w_c the inverse class
    # frequency, d1, d2 the distances to the two nearest cells (border_weights.py; 0: off;
    # U-Net: 10 and 5 pixels); cells: the regions of the mask's background (ISBI) or foreground
    border_weight: float = bounded(0.0, ge=0, finite=True)
    border_sigma: float = bounded(5.0, gt=0, finite=True)
    border_cells: Literal["background", "foreground"] = "background"
    aux_weight: float = bounded(0.5, ge=0)  # deep supervision: each auxiliary loss counts this much
    flips: bool = True  # augmentation: random horizontal/vertical flips and 90-degree turns
    # elastic deformation: displacement std in pixels (0: off; U-Net: 10)
    elastic: float = bounded(0.0, ge=0)
    # ... on a grid of this many points per side (Ronneberger et al.)
    elastic_grid: int = bounded(3, ge=2)
    test_flips: bool = False  # test scores: mean of the 8 flips and quarter turns (U-Net §4)
    # train on random crop x crop tiles of the images (0: whole images)
    crop: int = bounded(0, ge=0)
    # NHWC weights and images, the layout oneDNN's convolutions run fastest in on the CPU: the
    # same numbers up to rounding, 1.08-1.09x images/s at ISBI's setting (docs/segmentation.md)
    channels_last: bool = False


@dataclass
class SegmentationConfig(Checked):
    """A whole segmentation run: ``name`` plus the three sections."""

    name: str = "segmentation"
    task: Literal["segmentation"] = "segmentation"
    data: SegmentationDataConfig = field(default_factory=SegmentationDataConfig)
    model: UNetConfig = field(default_factory=UNetConfig)
    train: SegmentationTrainConfig = field(default_factory=SegmentationTrainConfig)

    def check(self) -> None:
        if self.data.source in ("shapes", "isbi") and self.data.size % self.model.factor:
            raise ValueError(
                f"data.size {self.data.size} must be a multiple of {self.model.factor} for "
                f"{len(self.model.channels)} levels of model.channels"
            )
        if self.train.crop % self.model.factor:
            raise ValueError(
                f"train.crop {self.train.crop} must be a multiple of {self.model.factor} for "
                f"{len(self.model.channels)} levels of model.channels"
            )
        if self.model.in_channels != 1 and self.data.source != "folder":
            raise ValueError(f"data.source {self.data.source!r} has grey images: in_channels 1")


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> SegmentationConfig:
    """Read a segmentation YAML config after ``overrides``; errors name file, line, field."""
    return load_yaml(SegmentationConfig, path, overrides)
