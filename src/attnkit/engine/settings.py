"""The training settings every task shares (the ``train:`` section of any config).

An application's train section subclasses :class:`TrainSettings` and adds only what is its own
(translation: ``max_tokens``, ``label_smoothing``; vision: augmentation). Each field declares
its range (:func:`~attnkit.config.bounded`); the loader checks it, so a config file with a bad
value is refused at load time with its file, line and field (:mod:`attnkit.config`), and
building the dataclass in code checks it again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from attnkit.config.bounds import Checked, bounded
from attnkit.devices import DESCRIBED, valid
from attnkit.precision import FROM_BF16, PRECISIONS

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
class TrainSettings(Checked):
    """Optimisation, schedule, stopping, precision, processes and checkpoints."""

    epochs: int = bounded(10, ge=1)
    max_steps: int | None = bounded(None, ge=1)  # stop after this many updates (smoke tests)
    max_minutes: float | None = bounded(None, gt=0)  # stop after this much training time
    optimiser: Literal["adam", "adamw"] = "adam"
    learning_rate: float = bounded(1e-3, gt=0, finite=True)
    betas: tuple[float, float] = bounded((0.9, 0.98), ge=0, lt=1)
    weight_decay: float = bounded(0.0, ge=0)
    decay_matrices_only: bool = False  # no weight decay on biases and LayerNorm gains
    # per update: noam, inverse_sqrt, linear (warm-up then linear decay to 0), warmup_cosine,
    # warmup_constant; per epoch: plateau (on the validation loss); or constant
    schedule: Schedule = "plateau"
    warmup_steps: int = bounded(1000, ge=1)
    # where linear and warmup_cosine end, as a fraction of the rate (nanoGPT: 0.1)
    min_lr_ratio: float = bounded(0.0, ge=0, lt=1)
    # warm-up as a share of all updates (overrides steps)
    warmup_fraction: float | None = bounded(None, ge=0, lt=1)
    plateau_factor: float = bounded(0.5, gt=0, lt=1)
    plateau_patience: int = bounded(1, ge=1)
    clip_norm: float = bounded(1.0, ge=0)  # 0: no clipping
    patience: int = bounded(5, ge=1)  # early stopping: epochs without a better validation score
    # average the last N epoch checkpoints into averaged.safetensors
    average_last: int = bounded(1, ge=1)
    seed: int = bounded(1, ge=0, lt=2**32)  # NumPy's and torch's seed range
    # torch threads; default OMP_NUM_THREADS, else every core
    threads: int | None = bounded(None, ge=1)
    # where to train: auto (CUDA, then MPS, then the CPU), cpu, cuda, cuda:N or mps
    # (attnkit.devices); under torchrun each process takes the GPU of its local rank
    device: str = "auto"
    # autocast precision: auto (CUDA: bf16 where supported, else fp16 with a gradient scaler;
    # CPU: bf16 only where a measured probe finds it faster), fp32, bf16 or fp16
    # (attnkit.precision)
    precision: Literal["auto", "fp32", "bf16", "fp16"] = bounded("auto", choices=PRECISIONS)
    # the older name of precision: true = bf16, false = fp32, auto = auto
    bf16: bool | Literal["auto"] | None = bounded(None, choices=(True, False, "auto"))
    compile: bool = False  # torch.compile the model (docs/benchmarks.md: where it pays)
    # DataLoader worker processes that build batches (tasks with a collate step: images,
    # rendering); 0 builds them in the training process
    workers: int = bounded(0, ge=0)
    # several processes (torchrun) and surviving faults: see docs/distributed.md
    # batches per process accumulated into one update (fairseq's name)
    update_freq: int = bounded(1, ge=1)
    # also write a resumable checkpoint every N updates; 0: per epoch
    checkpoint_every: int = bounded(0, ge=0)
    # complete step-N checkpoints kept on disk, newest first
    keep_checkpoints: int = bounded(2, ge=1)
    deterministic: bool = False  # torch.use_deterministic_algorithms: bitwise-repeatable runs
    fused_optimiser: bool = False  # one kernel for all parameters (faster Adam on the CPU)
    tensorboard: bool = True  # write TensorBoard event files under RUN/tensorboard

    def check(self) -> None:
        if not valid(self.device):
            raise ValueError(f"device must be {DESCRIBED}, got {self.device!r}")
        if self.bf16 is not None:  # the older name: read into precision, then forgotten
            wanted = FROM_BF16[self.bf16]
            if self.precision not in ("auto", wanted):
                raise ValueError(
                    f"bf16 {str(self.bf16).lower()} and precision {self.precision} disagree: "
                    "give precision only (bf16 is its older name)"
                )
            self.precision, self.bf16 = wanted, None

    @property
    def torch_threads(self) -> int:
        return self.threads or default_threads()
