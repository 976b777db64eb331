"""The configuration of an image-classification run: ``data``, ``model`` and ``train``.

``task: image-classification``; see ``configs/digits-vit.yaml``. The ``train:`` section is the
engine's :class:`~attnkit.engine.settings.TrainSettings` with the ViT recipe's defaults (AdamW,
linear warm-up then cosine decay, Dosovitskiy et al. 2021, App. B.1) plus vision's own fields:
batch size, label smoothing and augmentation. :func:`load_config` rejects unknown keys and bad
values with the file, line and field (:mod:`attnkit.config`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.apps.vision.model import ViTConfig
from attnkit.config import load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class ImageDataConfig:
    """Which images, and how they are split into train and test."""

    source: Literal["digits", "folder"] = "digits"  # scikit-learn's 8 x 8 digits, or a folder
    path: Path | None = None  # source: folder: ROOT/CLASS/*.png (or ROOT/train, ROOT/test)
    test_size: float = 0.2  # held-out share when there is no ROOT/test
    split_seed: int = 0  # the split is fixed by (test_size, split_seed)

    def __post_init__(self) -> None:
        if not 0.0 < self.test_size < 1.0:
            raise ValueError(f"test_size must be in (0, 1), got {self.test_size}")


@dataclass
class ImageTrainConfig(TrainSettings):
    """The engine's settings with the ViT defaults, and vision's own fields.

    There is no validation split (the test set never picks a model): the model is the last
    epoch's weights, ``patience`` never stops a run and ``schedule: plateau`` is refused.
    """

    epochs: int = 60
    optimiser: Literal["adam", "adamw"] = "adamw"
    learning_rate: float = 2e-3  # the peak rate, after the linear warm-up
    betas: tuple[float, float] = (0.9, 0.999)  # PyTorch's AdamW defaults
    weight_decay: float = 0.05
    schedule: Schedule = "warmup_cosine"  # per update: linear warm-up, then cosine decay to 0
    warmup_fraction: float | None = 0.05  # share of the updates spent warming up
    clip_norm: float = 0.0  # no clipping
    seed: int = 0
    fused_optimiser: bool = True  # one kernel for all parameters (about 3x faster on the CPU)
    # vision's own
    batch_size: int = 64  # images per batch
    label_smoothing: float = 0.0  # Szegedy et al. 2016, §7
    max_shift: int = 1  # augmentation: random translations of up to this many pixels
    max_rotation: float = 0.0  # ... random rotations of up to this many degrees
    max_scale: float = 0.0  # ... random zooms by 1 +- up to this fraction

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if self.max_shift < 0:
            raise ValueError(f"max_shift must be >= 0, got {self.max_shift}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if not 0.0 <= self.max_rotation <= 180.0:
            raise ValueError(f"max_rotation must be in [0, 180] degrees, got {self.max_rotation}")
        if not 0.0 <= self.max_scale < 1.0:
            raise ValueError(f"max_scale must be in [0, 1), got {self.max_scale}")
        if self.schedule == "plateau":
            raise ValueError(
                "schedule 'plateau' needs a validation loss, and image classification has no "
                "validation split; choose warmup_cosine (the default) or another schedule"
            )


@dataclass
class VisionConfig:
    """A whole image-classification run: ``name`` plus the three sections."""

    name: str = "image-classification"
    task: Literal["image-classification"] = "image-classification"
    data: ImageDataConfig = field(default_factory=ImageDataConfig)
    model: ViTConfig = field(default_factory=ViTConfig)
    train: ImageTrainConfig = field(default_factory=ImageTrainConfig)

    def __post_init__(self) -> None:
        m = self.model
        if self.data.source == "digits" and (m.image_size, m.channels, m.num_classes) != (8, 1, 10):
            raise ValueError(
                "data.source 'digits' has 10 classes of 8 x 8 grey images; set model.image_size: "
                f"8, model.channels: 1, model.num_classes: 10 (got {m.image_size}, {m.channels}, "
                f"{m.num_classes})"
            )
        if self.data.source == "folder" and self.data.path is None:
            raise ValueError("data.source 'folder' needs data.path (ROOT/CLASS/image.png)")


ImageTaskConfig = VisionConfig  # the name before the engine port


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> VisionConfig:
    """Read an image-classification YAML config after ``overrides`` (``--set
    section.key=value``); errors name the file and line (or the option) and the field."""
    return load_yaml(VisionConfig, path, overrides)
