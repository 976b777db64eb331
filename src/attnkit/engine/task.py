"""The task protocol: what an application tells the :class:`~attnkit.engine.trainer.Trainer`.

The engine owns the loop (seeding, optimiser and schedule, batch order and data position,
bf16 autocast, DDP, gradient accumulation, the NaN stop, kill-safe checkpoints, exact resume,
early stopping, progress and TensorBoard), as Lightning's ``LightningModule`` and Keras'
``fit`` separate the loop from the model. A task says only how to build its model, which
batches make an epoch, what a batch's loss is and how to validate::

    class MyTask:
        config = cfg                       # a dataclass with .name and .train (TrainSettings)
        def prepare(self, run, *, resume): ...      # read data, fit a vocabulary, save files
        def build_model(self): return MyNet(...)
        def epoch_batches(self, epoch): return [[0, 5, 2], [7, 1, 3], ...]  # pure in (seed, epoch)
        def units(self, batch): return len(batch)   # what the loss is averaged over
        def loss(self, model, batch): return Loss(total=summed_loss, units=len(batch))
        def validate(self, model): return {"valid_loss": ..., "valid_accuracy": ...}

The base class :class:`Task` gives every optional hook a default that does nothing, so the
engine calls them without asking whether they exist: ``monitor`` / ``mode`` (the validation
key that picks the best epoch, and whether higher is better), ``model_width`` (for the
``noam`` schedule), ``after_update`` (state updated from a step's statistics, e.g. a REINFORCE
baseline), ``state_dict`` / ``load_state_dict`` (that state, checkpointed with the run) and
``finish`` (final scores measured after training on the best weights, which the engine has
loaded into the model; it returns them and the engine writes them to ``metrics.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from attnkit.engine.rundir import RunDir


@dataclass
class Loss:
    """One batch's loss: ``total`` summed over its ``units`` (tokens, examples, ...), so the
    engine can average over every unit of an update however many batches it spans; ``stats``
    are plain numbers averaged into the epoch's log (e.g. ``{"nll": 2.1}``)."""

    total: torch.Tensor
    units: float
    stats: dict[str, float] = field(default_factory=dict)


class Task:
    """The base of every application's task: see the module docstring. Subclasses set
    ``config`` and implement the six required methods; the hooks below default to nothing."""

    config: Any
    monitor: str = "valid_loss"
    mode: str = "min"  # "min" or "max"
    model_width: int = 512  # the noam schedule's d_model
    validates: bool = True  # False: no validation by design (the last epoch kept, no warning)

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        """Read data, fit a vocabulary, save the task's own files into ``run`` (on resume:
        read them back)."""
        raise NotImplementedError

    def build_model(self) -> nn.Module:
        raise NotImplementedError

    def epoch_batches(self, epoch: int) -> list[Any]:
        """Epoch ``epoch``'s batches, a pure function of (seed, epoch)."""
        raise NotImplementedError

    def units(self, batch: Any) -> float:
        """What the loss of ``batch`` is averaged over (tokens, examples)."""
        raise NotImplementedError

    def collate(self, batch: Any) -> Any:
        """``batch`` made ready for :meth:`loss` (CPU tensors: decoded, padded, warped): run
        in DataLoader workers with ``train.workers`` > 0 (:mod:`~attnkit.engine.loading`).
        A pure function of ``batch``. The default hands the batch on as it is."""
        return batch

    def loss(self, model: nn.Module, batch: Any) -> Loss:
        """The loss of one batch, as :meth:`collate` made it ready."""
        raise NotImplementedError

    def validate(self, model: nn.Module) -> dict[str, float]:
        """Validation scores (``{}`` without validation data: the last epoch is kept)."""
        raise NotImplementedError

    # -- optional hooks ------------------------------------------------------------------
    def after_update(self, stats: dict[str, float]) -> None:
        """Called after each optimiser step with the update's statistics."""

    def state_dict(self) -> dict[str, Any]:
        """The task's own state to checkpoint (JSON-serialisable)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s state on resume."""

    def finish(self, run: RunDir, model: nn.Module, result: Any) -> dict[str, Any]:
        """Final scores of the best model (already loaded into ``model``), e.g. test
        accuracy; the engine adds them to ``metrics.json`` and ``result.final``."""
        return {}


def monitor_of(task: Task) -> tuple[str, str]:
    """The validation key that picks the best epoch and whether higher is better."""
    return task.monitor, task.mode


def pick_best(history: list[dict], key: str = "valid_loss", mode: str = "min") -> dict:
    """The best epoch of ``history`` by ``key`` (ties: the lower validation loss, then the
    earlier epoch); epochs without ``key`` (no validation data) fall back to the last epoch."""
    rows = [h for h in history if key in h]
    if not rows:
        return history[-1]
    sign = 1.0 if mode == "max" else -1.0
    return max(rows, key=lambda h: (sign * h[key], -h.get("valid_loss", 0.0), -h["epoch"]))
