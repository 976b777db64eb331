"""The configuration of a captioning experiment (``task: captioning``): three typed sections.

Every field has a default and a comment; :func:`load_experiment` rejects unknown keys and bad
values with the file, line and field (see :mod:`attnkit.config`).

The training budget is the engine's: ``train.epochs`` epochs of ``train.updates_per_epoch``
updates each, each update one batch of ``batch_size`` scenes drawn with replacement, and a
validation at the end of every epoch (Xu et al. 2015 select their model on validation BLEU;
here exact match first, then BLEU). ``epochs * updates_per_epoch`` is what the hand-written
loop before the engine called ``steps``, and ``updates_per_epoch`` its ``eval_every``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.apps.captioning.model import CaptionerConfig
from attnkit.config import load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class SceneDataConfig:
    """The generated scenes (:mod:`attnkit.apps.captioning.scenes`)."""

    seed: int = 0  # every split is a pure function of the seed
    canvas: int = 32  # image side in pixels (must equal model.canvas)
    n_train: int = 4000
    n_valid: int = 300
    n_test: int = 500
    noise: float = 0.03  # standard deviation of the pixel noise
    max_objects: int = 3  # scenes hold 2 to max_objects (2 or 3) shapes
    min_size: int = 8  # shape sizes in pixels
    max_size: int = 11

    def __post_init__(self) -> None:
        if self.max_objects not in (2, 3):
            raise ValueError(f"max_objects must be 2 or 3, got {self.max_objects}")
        if not 3 <= self.min_size <= self.max_size or 2 * self.max_size > self.canvas:
            raise ValueError(
                f"shape sizes {self.min_size}..{self.max_size} do not fit a {self.canvas}px canvas"
            )
        for name in ("n_train", "n_valid", "n_test"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.noise >= 0:
            raise ValueError(f"noise must be >= 0, got {self.noise}")


@dataclass
class CaptionTrainConfig(TrainSettings):
    """The engine's settings (:class:`~attnkit.engine.settings.TrainSettings`) with the
    defaults of the captioning recipe (Adam, 100 warm-up updates to a constant rate, clipping
    at norm 5, no early stopping), and captioning's own: the batch, Xu et al.'s loss weights
    and the longest caption decoded."""

    epochs: int = 6  # validations; the training budget is epochs * updates_per_epoch updates
    learning_rate: float = 3.0e-3
    betas: tuple[float, float] = (0.9, 0.999)  # Adam's defaults (Kingma & Ba 2015)
    schedule: Schedule = "warmup_constant"  # linear warm-up over warmup_steps, then constant
    warmup_steps: int = 100
    clip_norm: float = 5.0
    patience: int = 1000  # epochs without a better validation score; default: never stop
    seed: int = 0
    updates_per_epoch: int = 500  # updates between validations (and per-epoch checkpoints)
    batch_size: int = 64  # scenes per update, drawn with replacement
    penalty: float = 0.01  # lambda of the doubly stochastic penalty, eq. (14) (soft only)
    reinforce: float = 1.0  # lambda_r of the REINFORCE term, eq. (12) (hard only)
    entropy: float = 0.01  # lambda_e of the entropy bonus, §4.1 (hard only)
    baseline_decay: float = 0.9  # b_k = decay * b_{k-1} + (1 - decay) * log p(y|s,a), §4.1
    # REINFORCE's baseline (hard only; captioning/losses.py): moving (the decayed average, §4.1),
    # loo (the other samples' mean, Kool et al. 2019; needs samples >= 2), learned, or none
    baseline: Literal["moving", "loo", "learned", "none"] = "moving"
    samples: int = 1  # captions sampled per image in a batch (hard; the batch grows k times)
    # gumbel only: temperature tau = max(tau_min, tau_start * exp(-tau_decay * update))
    tau_start: float = 1.0
    tau_min: float = 0.5  # Jang et al. 2017 anneal to 0.5
    tau_decay: float = 0.001
    max_len: int = 20  # longest caption greedy decoding emits

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("updates_per_epoch", "batch_size", "max_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("penalty", "reinforce", "entropy"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.baseline_decay < 1:
            raise ValueError(f"baseline_decay must be in [0, 1), got {self.baseline_decay}")
        if self.samples < 1 or (self.baseline == "loo" and self.samples < 2):
            raise ValueError(
                f"samples must be >= 1 (>= 2 for the leave-one-out baseline), got {self.samples}"
            )
        if not 0 < self.tau_min <= self.tau_start or self.tau_decay < 0:
            raise ValueError(
                "need 0 < tau_min <= tau_start and tau_decay >= 0, got "
                f"{self.tau_min}, {self.tau_start}, {self.tau_decay}"
            )
        if self.schedule == "plateau":
            raise ValueError(
                "schedule 'plateau' needs a validation loss, which captioning does not compute "
                "(it validates by decoding); choose warmup_constant, constant or another"
            )

    @property
    def total_updates(self) -> int:
        """The training budget in updates (``max_steps`` may end it sooner)."""
        total = self.epochs * self.updates_per_epoch
        return min(total, self.max_steps) if self.max_steps else total


@dataclass
class CaptioningConfig:
    """A captioning experiment: ``task: captioning`` and the three sections."""

    name: str = "scenes"
    task: Literal["captioning"] = "captioning"
    data: SceneDataConfig = field(default_factory=SceneDataConfig)
    model: CaptionerConfig = field(default_factory=CaptionerConfig)
    train: CaptionTrainConfig = field(default_factory=CaptionTrainConfig)

    def __post_init__(self) -> None:
        if self.model.canvas != self.data.canvas:
            raise ValueError(
                f"model.canvas {self.model.canvas} differs from data.canvas {self.data.canvas}"
            )


CaptionExperiment = CaptioningConfig  # the name before the engine port


def load_experiment(path: str | Path, overrides: Sequence[str] = ()) -> CaptioningConfig:
    """Read a captioning YAML config after ``overrides`` (``"train.epochs=2"``, as
    ``--set``); errors name the file and line (or the option) and the field."""
    return load_yaml(CaptioningConfig, path, overrides)
