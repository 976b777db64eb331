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
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class SceneDataConfig(Checked):
    """The generated scenes (:mod:`attnkit.apps.captioning.scenes`)."""

    seed: int = 0  # every split is a pure function of the seed
    canvas: int = 32  # image side in pixels (must equal model.canvas)
    n_train: int = bounded(4000, ge=1)
    n_valid: int = bounded(300, ge=1)
    n_test: int = bounded(500, ge=1)
    noise: float = bounded(0.03, ge=0)  # standard deviation of the pixel noise
    # scenes hold 2 to max_objects (2 or 3) shapes
    max_objects: int = bounded(3, choices=(2, 3))
    min_size: int = bounded(8, ge=3)  # shape sizes in pixels
    max_size: int = 11

    def check(self) -> None:
        if self.min_size > self.max_size or 2 * self.max_size > self.canvas:
            raise ValueError(
                f"shape sizes {self.min_size}..{self.max_size} do not fit a {self.canvas}px canvas"
            )


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
    # updates between validations (and per-epoch checkpoints)
    updates_per_epoch: int = bounded(500, ge=1)
    batch_size: int = bounded(64, ge=1)  # scenes per update, drawn with replacement
    # lambda of the doubly stochastic penalty, eq. (14) (soft only)
    penalty: float = bounded(0.01, ge=0)
    reinforce: float = bounded(1.0, ge=0)  # lambda_r of the REINFORCE term, eq. (12) (hard only)
    entropy: float = bounded(0.01, ge=0)  # lambda_e of the entropy bonus, §4.1 (hard only)
    # b_k = decay * b_{k-1} + (1 - decay) * log p(y|s,a), §4.1
    baseline_decay: float = bounded(0.9, ge=0, lt=1)
    # REINFORCE's baseline (hard only; captioning/losses.py): moving (the decayed average, §4.1),
    # loo (the other samples' mean, Kool et al. 2019; needs samples >= 2), learned, or none
    baseline: Literal["moving", "loo", "learned", "none"] = "moving"
    # captions sampled per image in a batch (hard; the batch grows k times)
    samples: int = bounded(1, ge=1)
    # gumbel only: temperature tau = max(tau_min, tau_start * exp(-tau_decay * update))
    tau_start: float = 1.0
    tau_min: float = bounded(0.5, gt=0)  # Jang et al. 2017 anneal to 0.5
    tau_decay: float = bounded(0.001, ge=0)
    max_len: int = bounded(20, ge=1)  # longest caption greedy decoding emits

    def check(self) -> None:
        super().check()
        if self.baseline == "loo" and self.samples < 2:
            raise ValueError(
                f"samples must be >= 1 (>= 2 for the leave-one-out baseline), got {self.samples}"
            )
        if self.tau_min > self.tau_start:
            raise ValueError(
                f"tau_min must be at most tau_start, got {self.tau_min} and {self.tau_start}"
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
class CaptioningConfig(Checked):
    """A captioning experiment: ``task: captioning`` and the three sections."""

    name: str = "scenes"
    task: Literal["captioning"] = "captioning"
    data: SceneDataConfig = field(default_factory=SceneDataConfig)
    model: CaptionerConfig = field(default_factory=CaptionerConfig)
    train: CaptionTrainConfig = field(default_factory=CaptionTrainConfig)

    def check(self) -> None:
        if self.model.canvas != self.data.canvas:
            raise ValueError(
                f"model.canvas {self.model.canvas} differs from data.canvas {self.data.canvas}"
            )


CaptionExperiment = CaptioningConfig  # the name before the engine port


def load_experiment(path: str | Path, overrides: Sequence[str] = ()) -> CaptioningConfig:
    """Read a captioning YAML config after ``overrides`` (``"train.epochs=2"``, as
    ``--set``); errors name the file and line (or the option) and the field."""
    return load_yaml(CaptioningConfig, path, overrides)
