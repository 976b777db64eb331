"""Fitting one series' detector as an engine task (:class:`~attnkit.engine.task.Task`).

A detector learns the normal shape of one series from the sliding windows ending in its first
rows (NAB's probationary period). :class:`SeriesTask` gives the
:class:`~attnkit.engine.trainer.Trainer` one epoch of ``steps`` batches, each ``batch_size``
windows drawn with replacement by a generator seeded from ``(seed, epoch)``, and the model's
loss on them (the forecaster's next-row NLL, or the VRAE's negative ELBO with its KL weight
annealed by the update number, carried in the batch so that a resumed run anneals exactly as
an uninterrupted one). The engine does the rest: seeding, Adam, gradient clipping at 5, the NaN
stop, kill-safe checkpoints and exact resume into ``RUN/series/NAME/``. :meth:`finish` writes
``detector.json`` beside the engine's ``model.safetensors``: a complete series directory is
one that :func:`~attnkit.apps.anomaly.detector.load_detector` reads. Without a run directory
(a detector fitted for one CSV, an online update) the engine trains in memory.
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from attnkit import devices
from attnkit.apps.anomaly.config import DetectorConfig
from attnkit.apps.anomaly.models import build_detector
from attnkit.engine.checkpoint import write_text
from attnkit.engine.results import TrainResult
from attnkit.engine.settings import TrainSettings
from attnkit.engine.task import Loss, Task
from attnkit.engine.trainer import Resume, fit

GRAD_CLIP = 5.0  # gradient norm clipping of every detector update
ADAM_BETAS = (0.9, 0.999)  # torch's defaults, as the detectors were tuned with


def series_settings(
    cfg: DetectorConfig, *, learning_rate: float | None = None, seed: int | None = None
) -> TrainSettings:
    """The engine's settings for one detector fit: one epoch, Adam at a constant rate,
    clipping at 5, a checkpoint every ``cfg.checkpoint_every`` updates (and at the end), one
    kept; torch's current thread count (a caller's choice stays in force)."""
    return TrainSettings(
        epochs=1,
        optimiser="adam",
        learning_rate=cfg.learning_rate if learning_rate is None else learning_rate,
        betas=ADAM_BETAS,
        schedule="constant",
        clip_norm=GRAD_CLIP,
        patience=1,
        seed=cfg.seed if seed is None else seed,
        threads=torch.get_num_threads(),
        checkpoint_every=cfg.checkpoint_every,
        keep_checkpoints=1,
        tensorboard=False,  # one series' few hundred updates: the run's metrics.json suffices
        device=cfg.device,
    )


@dataclass
class SeriesConfig:
    """What one series' run directory records in its ``config.yaml``."""

    name: str
    detector: DetectorConfig
    train: TrainSettings
    train_rows: int  # the series' first rows the windows end in
    channels: int  # value columns
    mean: list[float] = field(default_factory=list)  # (C,) standardisation
    std: list[float] = field(default_factory=list)  # (C,)


class Batch(NamedTuple):
    """``index (B,)`` of the windows in one update, and that update's number (from 1)."""

    update: int
    index: torch.Tensor


def new_model(cfg: DetectorConfig, channels: int) -> torch.nn.Module:
    """An untrained detector for ``channels`` value columns."""
    if cfg.model == "vrae":
        options = {
            "hidden": cfg.hidden,
            "latent": cfg.latent,
            "eta": cfg.eta,
            "score_rows": cfg.score_rows,
        }
    else:
        options = {
            "d_model": cfg.d_model,
            "num_heads": cfg.num_heads,
            "d_ff": cfg.d_ff,
            "num_layers": cfg.num_layers,
        }
    return build_detector(cfg.model, channels, **options)


def draw_batches(n_windows: int, cfg: DetectorConfig, steps: int, seed: int) -> list[Batch]:
    """``steps`` batches of ``min(batch_size, n_windows)`` window indices, with replacement,
    from a generator seeded with ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    size = min(cfg.batch_size, n_windows)
    return [
        Batch(i + 1, torch.randint(n_windows, (size,), generator=generator)) for i in range(steps)
    ]


def kl_weight(update: int, cfg: DetectorConfig) -> float:
    """The VRAE's KL cost annealing (Bowman et al. 2016): ``min(1, update / kl_anneal_steps)``
    at update ``update`` (counted from 1)."""
    return min(1.0, update / max(cfg.kl_anneal_steps, 1))


def batch_loss(model, windows: torch.Tensor, batch: Batch, cfg: DetectorConfig) -> Loss:
    """The detector's mean loss on ``windows[batch.index] (B, W, C)``, summed over the
    batch's B windows (the engine divides by them again)."""
    x = windows[batch.index].to(devices.of(model))  # (B, W, C), on the model's device
    mean = model.loss(x, kl_weight=kl_weight(batch.update, cfg))
    n = len(batch.index)
    return Loss(total=mean * n, units=float(n))


class SeriesTask(Task):
    """Fit one detector on ``windows (N, W, C)`` (standardised; see the module docstring).

    Args:
        windows: the training windows, each ending in one of the first ``train_rows`` rows.
        config: the run's :class:`SeriesConfig` (its ``train`` from :func:`series_settings`).
        steps: updates in the one epoch (``config.detector.steps`` unless given).
        model: train this model further (online learning) instead of a new one.
    """

    def __init__(
        self,
        windows: torch.Tensor,
        config: SeriesConfig,
        *,
        steps: int | None = None,
        model: torch.nn.Module | None = None,
    ) -> None:
        self.windows, self.config, self.start = windows, config, model
        self.steps = config.detector.steps if steps is None else steps
        self.model: torch.nn.Module | None = None  # the trained model, set by finish()

    def prepare(self, run, *, resume: bool) -> None:
        """Nothing to read: the windows are given."""

    def build_model(self) -> torch.nn.Module:
        if self.start is not None:
            return self.start
        return new_model(self.config.detector, self.config.channels)

    def epoch_batches(self, epoch: int) -> list[Batch]:
        """Epoch 1 draws with ``train.seed`` itself; a later one with a seed of its own."""
        seed = self.config.train.seed + 1_000_003 * (epoch - 1)
        batches = draw_batches(len(self.windows), self.config.detector, self.steps, seed)
        offset = self.steps * (epoch - 1)
        return [Batch(b.update + offset, b.index) for b in batches]

    def units(self, batch: Batch) -> float:
        return float(len(batch.index))

    def loss(self, model, batch: Batch) -> Loss:
        return batch_loss(model, self.windows, batch, self.config.detector)

    validates = False  # every training row is needed: the last epoch is the model

    def validate(self, model) -> dict:
        """No held-out rows (every training row is needed): the last epoch is the model."""
        return {}

    def finish(self, run, model, result) -> dict:
        """Keep the trained model and, in a run directory, write ``detector.json`` (the series
        is then complete). No final scores: a detector is judged over all the series."""
        model.eval()
        self.model = model
        if run is not None:
            c = self.config
            write_detector_json(
                Path(run.root), c.detector, c.mean, c.std, c.train_rows, c.detector.threshold
            )
        return {}


def write_detector_json(
    directory: Path,
    cfg: DetectorConfig,
    mean: list[float],
    std: list[float],
    train_rows: int,
    threshold: float,
) -> None:
    """``detector.json`` (atomic): what :func:`~attnkit.apps.anomaly.detector.load_detector`
    needs besides ``model.safetensors``: the settings, the standardisation, the training rows
    and the threshold."""
    meta = {
        "config": asdict(cfg),
        "mean": list(mean),
        "std": list(std),
        "train_rows": int(train_rows),
        "threshold": float(threshold),
    }
    write_text(Path(directory) / "detector.json", json.dumps(meta, indent=2))


def run_task(
    task: SeriesTask, run_dir: str | Path | None = None, *, resume: Resume = False
) -> TrainResult:
    """:func:`attnkit.engine.trainer.fit` of ``task`` into ``run_dir``, or in memory when None
    (nothing written). The engine's per-run INFO lines are held back (one fit per series, or
    per online block, would flood the log); its warnings pass."""
    with _engine_quiet():
        return fit(task, run_dir, resume=resume, progress=False)


def online_update(
    model: torch.nn.Module, windows: torch.Tensor, cfg: DetectorConfig, *, seed: int
) -> None:
    """Continue training ``model`` in place: ``cfg.online_steps`` updates on ``windows
    (N, W, C)`` at a third of the learning rate, a fresh optimiser, seeded with ``seed``; one
    engine run in memory (see :mod:`attnkit.apps.anomaly.detector`)."""
    settings = series_settings(cfg, learning_rate=cfg.learning_rate / 3, seed=seed)
    config = SeriesConfig("online", cfg, settings, len(windows), windows.shape[-1])
    run_task(SeriesTask(windows, config, steps=cfg.online_steps, model=model))


@contextlib.contextmanager
def _engine_quiet():
    engine = logging.getLogger("attnkit.engine")
    level = engine.level
    engine.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        engine.setLevel(level)


def standardise(head: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mean (C,), std (C,))`` of the training rows ``head (N, C)``; a flat column's std
    is 1."""
    mean, std = head.mean(axis=0), head.std(axis=0)
    return mean, np.where(std > 1e-8, std, 1.0)
