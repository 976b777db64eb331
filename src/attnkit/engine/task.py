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

Optional: ``monitor`` (the validation key that picks the best epoch, default ``valid_loss``),
``mode`` (``"min"`` or ``"max"``), ``model_width`` (for the ``noam`` schedule), ``after_update``
(state updated from a step's statistics, e.g. a REINFORCE baseline), ``state_dict`` /
``load_state_dict`` (that state, checkpointed with the run), ``finish(run, model, result)``
(final scores written after training) and ``summary(result)`` (the line the CLI prints).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

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


@runtime_checkable
class Task(Protocol):
    """See the module docstring."""

    config: Any

    def prepare(self, run: RunDir, *, resume: bool) -> None: ...

    def build_model(self) -> nn.Module: ...

    def epoch_batches(self, epoch: int) -> list[Any]: ...

    def units(self, batch: Any) -> float: ...

    def loss(self, model: nn.Module, batch: Any) -> Loss: ...

    def validate(self, model: nn.Module) -> dict[str, float]: ...


def monitor_of(task: Task) -> tuple[str, str]:
    """The validation key that picks the best epoch and whether higher is better."""
    return getattr(task, "monitor", "valid_loss"), getattr(task, "mode", "min")


def pick_best(history: list[dict], key: str = "valid_loss", mode: str = "min") -> dict:
    """The best epoch of ``history`` by ``key`` (ties: the lower validation loss, then the
    earlier epoch); epochs without ``key`` (no validation data) fall back to the last epoch."""
    rows = [h for h in history if key in h]
    if not rows:
        return history[-1]
    sign = 1.0 if mode == "max" else -1.0
    return max(rows, key=lambda h: (sign * h[key], -h.get("valid_loss", 0.0), -h["epoch"]))
