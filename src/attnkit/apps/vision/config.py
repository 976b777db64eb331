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
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class ImageDataConfig(Checked):
    """Which images, and how they are split into train and test."""

    source: Literal["digits", "folder"] = "digits"  # scikit-learn's 8 x 8 digits, or a folder
    path: Path | None = None  # source: folder: ROOT/CLASS/*.png (or ROOT/train, ROOT/test)
    test_size: float = bounded(0.2, gt=0, lt=1)  # held-out share when there is no ROOT/test
    split_seed: int = 0  # the split is fixed by (test_size, split_seed)


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
    batch_size: int = bounded(64, ge=1)  # images per batch
    label_smoothing: float = bounded(0.0, ge=0, lt=1)  # Szegedy et al. 2016, §7
    # augmentation: random translations of up to this many pixels
    max_shift: int = bounded(1, ge=0)
    max_rotation: float = bounded(0.0, ge=0, le=180)  # ... random rotations, up to N degrees
    max_scale: float = bounded(0.0, ge=0, lt=1)  # ... random zooms by 1 +- up to this fraction

    def check(self) -> None:
        super().check()
        if self.schedule == "plateau":
            raise ValueError(
                "schedule 'plateau' needs a validation loss, and image classification has no "
                "validation split; choose warmup_cosine (the default) or another schedule"
            )


@dataclass
class VisionConfig(Checked):
    """A whole image-classification run: ``name`` plus the three sections."""

    name: str = "image-classification"
    task: Literal["image-classification"] = "image-classification"
    data: ImageDataConfig = field(default_factory=ImageDataConfig)
    model: ViTConfig = field(default_factory=ViTConfig)
    train: ImageTrainConfig = field(default_factory=ImageTrainConfig)

    def check(self) -> None:
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
