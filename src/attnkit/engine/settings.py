"""The training settings every task shares (the ``train:`` section of any config).

An application's train section subclasses :class:`TrainSettings` and adds only what is its own
(translation: ``max_tokens``, ``label_smoothing``; vision: augmentation). Ranges are checked
when the dataclass is built, so a config file with a bad value is refused at load time with
its file, line and field (:mod:`attnkit.config`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Literal

Schedule = Literal[
    "constant", "noam", "inverse_sqrt", "plateau", "linear", "warmup_cosine", "warmup_constant"
]


def default_threads() -> int:
    """``OMP_NUM_THREADS`` when set, else every core torch sees."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return os.cpu_count() or 1


@dataclass
class TrainSettings:
    """Optimisation, schedule, stopping, precision, processes and checkpoints."""

    epochs: int = 10
    max_steps: int | None = None  # stop after this many updates (smoke tests, benchmarks)
    max_minutes: float | None = None  # stop after this much training time (then validate)
    optimiser: Literal["adam", "adamw"] = "adam"
    learning_rate: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.98)
    weight_decay: float = 0.0
    # per update: noam, inverse_sqrt, linear (warm-up then linear decay to 0), warmup_cosine,
    # warmup_constant; per epoch: plateau (on the validation loss); or constant
    schedule: Schedule = "plateau"
    warmup_steps: int = 1000
    warmup_fraction: float | None = None  # warm-up as a share of all updates (overrides steps)
    plateau_factor: float = 0.5
    plateau_patience: int = 1
    clip_norm: float = 1.0  # 0: no clipping
    patience: int = 5  # early stopping: epochs without a better validation score
    average_last: int = 1  # average the last N epoch checkpoints into averaged.safetensors
    seed: int = 1
    threads: int | None = None  # torch threads; default OMP_NUM_THREADS, else every core
    # bfloat16 autocast: auto = on where the device computes it natively (CPU: AVX-512 BF16 or
    # AMX; GPU: Ampere and later), off elsewhere; true warns where it is slower (attnkit.precision)
    bf16: bool | Literal["auto"] = "auto"
    # several processes (torchrun) and surviving faults: see docs/distributed.md
    update_freq: int = 1  # batches per process accumulated into one update (fairseq's name)
    checkpoint_every: int = 0  # also write a resumable checkpoint every N updates; 0: per epoch
    keep_checkpoints: int = 2  # complete step-N checkpoints kept on disk, newest first
    deterministic: bool = False  # torch.use_deterministic_algorithms: bitwise-repeatable runs
    fused_optimiser: bool = False  # one kernel for all parameters (faster Adam on the CPU)
    tensorboard: bool = True  # write TensorBoard event files under RUN/tensorboard

    def __post_init__(self) -> None:
        positive = ["epochs", "update_freq", "keep_checkpoints", "warmup_steps", "average_last"]
        positive += ["plateau_patience", "patience"]
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("checkpoint_every", "weight_decay", "clip_norm", "seed"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be finite and positive, got {self.learning_rate}")
        if len(self.betas) != 2 or not all(0 <= b < 1 for b in self.betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {list(self.betas)}")
        if not 0 < self.plateau_factor < 1:
            raise ValueError(f"plateau_factor must be in (0, 1), got {self.plateau_factor}")
        if self.warmup_fraction is not None and not 0 <= self.warmup_fraction < 1:
            raise ValueError(f"warmup_fraction must be in [0, 1), got {self.warmup_fraction}")
        for name in ("max_steps", "threads"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.bf16 not in (True, False, "auto"):
            raise ValueError(f"bf16 must be true, false or auto, got {self.bf16!r}")
        if self.max_minutes is not None and not self.max_minutes > 0:
            raise ValueError(f"max_minutes must be positive, got {self.max_minutes}")

    @property
    def torch_threads(self) -> int:
        return self.threads or default_threads()
