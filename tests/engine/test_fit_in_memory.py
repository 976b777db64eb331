"""``fit(task, run_dir=None)``: the one loop trains in memory, writes nothing, and gives the
best epoch's weights back (kept as a copy, not reloaded from a file)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pytest
import torch

from attnkit.engine.settings import TrainSettings
from attnkit.engine.task import Loss, Task
from attnkit.engine.trainer import fit


@dataclass
class _Config:
    name: str = "line"
    train: TrainSettings = field(
        default_factory=lambda: TrainSettings(epochs=4, learning_rate=0.05, patience=10)
    )


class _Regression(Task):
    """Least squares on 32 points; ``mode`` picks which epoch counts as best."""

    def __init__(self, mode: str = "min") -> None:
        self.config, self.mode = _Config(), mode
        gen = torch.Generator().manual_seed(0)
        self.x = torch.randn(32, 3, generator=gen)
        self.y = self.x @ torch.tensor([1.0, -2.0, 0.5])
        self.prepared_with = "unset"

    def prepare(self, run, *, resume: bool) -> None:
        self.prepared_with = run

    def build_model(self) -> torch.nn.Module:
        return torch.nn.Linear(3, 1)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        return [list(range(i, i + 4)) for i in range(0, 32, 4)]

    def units(self, batch: list[int]) -> float:
        return len(batch)

    def loss(self, model, batch) -> Loss:
        error = model(self.x[batch]).squeeze(-1) - self.y[batch]  # (B,)
        return Loss((error**2).sum(), len(batch))

    @torch.no_grad()
    def validate(self, model) -> dict[str, float]:
        return {"valid_loss": float(((model(self.x).squeeze(-1) - self.y) ** 2).mean())}

    def finish(self, run, model, result) -> dict[str, float]:
        return {"final_loss": self.validate(model)["valid_loss"], "run_given": run is not None}


@pytest.mark.parametrize("mode", ["min", "max"])
def test_in_memory_fit_returns_the_best_epochs_weights(tmp_path, monkeypatch, mode):
    monkeypatch.chdir(tmp_path)
    task = _Regression(mode)
    result = fit(task, None, progress=False)
    assert result.run_dir is None and task.prepared_with is None
    assert result.final["run_given"] is False
    losses = [h["valid_loss"] for h in result.history]
    best = losses.index(min(losses) if mode == "min" else max(losses))
    assert result.best_epoch == best + 1
    # the model finish() saw is the best epoch's, not the last one's ("max" picks epoch 1)
    assert result.final["final_loss"] == pytest.approx(losses[best], rel=1e-6)
    if mode == "max":
        assert result.final["final_loss"] != pytest.approx(losses[-1], rel=1e-3)
    assert os.listdir(tmp_path) == []  # nothing written


def test_in_memory_fit_cannot_resume():
    with pytest.raises(ValueError, match="run directory"):
        fit(_Regression(), None, resume=True, progress=False)


class _Empty(_Regression):
    def epoch_batches(self, epoch: int) -> list[list[int]]:
        return []


def test_no_training_examples_is_an_error_and_writes_nothing(tmp_path):
    with pytest.raises(ValueError, match="line: no training examples"):
        fit(_Empty(), tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "model.safetensors").exists()
