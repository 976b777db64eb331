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
from attnkit.config import load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class SegmentationDataConfig:
    """Which images: generated shapes (the default), ISBI 2012 EM slices, or a folder."""

    source: Literal["shapes", "isbi", "folder"] = "shapes"
    # shapes: images of similar-intensity shapes where only discs are the target
    sizes: tuple[int, int, int] = (400, 50, 100)  # train / valid / test images
    size: int = 64  # image side in pixels (shapes; isbi: downsampled to this, 512 = full size)
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

    def __post_init__(self) -> None:
        if any(n < 0 for n in self.sizes) or self.sizes[0] < 1:
            raise ValueError(f"sizes must be >= 0 with a training set, got {list(self.sizes)}")
        if self.size < 8:
            raise ValueError(f"size must be at least 8 pixels, got {self.size}")
        if self.source == "folder" and (self.train_images is None or self.train_masks is None):
            raise ValueError("source 'folder' needs train_images and train_masks (PNG folders)")


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
    batch_size: int = 8
    dice_weight: float = 1.0  # loss = BCE + dice_weight * soft Dice loss (Milletari et al. 2016)
    aux_weight: float = 0.5  # deep supervision: each auxiliary loss counts this much
    flips: bool = True  # augmentation: random horizontal/vertical flips and 90-degree turns
    elastic: float = 0.0  # elastic deformation: displacement std in pixels (0: off; U-Net: 10)
    elastic_grid: int = 3  # ... on a grid of this many points per side (Ronneberger et al.)
    test_flips: bool = False  # test scores: mean of the 8 flips and quarter turns (U-Net §4)
    crop: int = 0  # train on random crop x crop tiles of the images (0: whole images)
    # NHWC weights and images, the layout oneDNN's convolutions run fastest in on the CPU: the
    # same numbers up to rounding, 1.08-1.09x images/s at ISBI's setting (docs/segmentation.md)
    channels_last: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.crop < 0:
            raise ValueError(f"crop must be >= 0 (0: whole images), got {self.crop}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if self.elastic_grid < 2:
            raise ValueError(f"elastic_grid must be at least 2, got {self.elastic_grid}")
        for name in ("dice_weight", "aux_weight", "elastic"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


@dataclass
class SegmentationConfig:
    """A whole segmentation run: ``name`` plus the three sections."""

    name: str = "segmentation"
    task: Literal["segmentation"] = "segmentation"
    data: SegmentationDataConfig = field(default_factory=SegmentationDataConfig)
    model: UNetConfig = field(default_factory=UNetConfig)
    train: SegmentationTrainConfig = field(default_factory=SegmentationTrainConfig)

    def __post_init__(self) -> None:
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
