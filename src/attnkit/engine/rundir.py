"""A run directory: everything needed to use a trained model, and nothing pickled.

::

    RUN_DIR/
      config.yaml            the configuration (as trained; its task: names the application)
      ...                    the task's own files (tokenizer, vocabulary)
      model.safetensors      the best model (by the task's validation score)
      averaged.safetensors   the average of the last N epochs (train.average_last > 1)
      metrics.json           per-epoch history and the best epoch
      train.log              the log
      tensorboard/           TensorBoard event files
      checkpoints/step-N/    model + optimizer + scheduler + RNG states + data position
      checkpoints/last       -> step-N, the newest complete one (a symlink, swapped atomically)
      checkpoints/epochN.safetensors   per-epoch weights kept for averaging

See :mod:`attnkit.engine.snapshots` for how checkpoints are written and found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attnkit.config import save_yaml
from attnkit.errors import DataError


class RunDir:
    """Paths inside a run directory."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    config = property(lambda self: self.root / "config.yaml")
    model = property(lambda self: self.root / "model.safetensors")
    averaged = property(lambda self: self.root / "averaged.safetensors")
    metrics = property(lambda self: self.root / "metrics.json")
    log = property(lambda self: self.root / "train.log")
    tensorboard = property(lambda self: self.root / "tensorboard")
    checkpoints = property(lambda self: self.root / "checkpoints")
    last = property(lambda self: self.root / "checkpoints" / "last")

    def existing_config(self) -> Path:
        """``config.yaml`` of a trained run; FileNotFoundError naming what is missing."""
        if not self.root.is_dir():
            raise FileNotFoundError(f"{self.root}: no such run directory")
        if not self.config.is_file():
            raise FileNotFoundError(missing_config(self.root))
        return self.config

    def epoch_checkpoint(self, epoch: int) -> Path:
        return self.root / "checkpoints" / f"epoch{epoch}.safetensors"

    def step_checkpoint(self, step: int) -> Path:
        """The directory of the complete training state after update ``step``."""
        return self.root / "checkpoints" / f"step-{step:08d}"

    def write_metrics(self, metrics: dict) -> None:
        from attnkit.engine.checkpoint import write_text  # torch: imported when training

        write_text(self.metrics, json.dumps(metrics, indent=2))

    def read_metrics(self) -> dict:
        """``metrics.json`` ({} when the run has none yet); a damaged one is a
        :class:`~attnkit.errors.DataError` naming the file, line and column."""
        return read_json(self.metrics) if self.metrics.exists() else {}

    def save_config(self, cfg: Any) -> None:
        save_yaml(cfg, self.config)


def read_json(path: Path) -> Any:
    """The JSON document in ``path``; a damaged one is a :class:`~attnkit.errors.DataError`
    naming the file, line and column (not a bare ``JSONDecodeError``)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(
            f"{path}, line {err.lineno}, column {err.colno}: not valid JSON ({err.msg}); "
            "the run wrote it, so it was damaged since (restore it, or retrain)"
        ) from None


def missing_config(root: str | Path) -> str:
    """Why ``root`` is not a run: its ``config.yaml`` is missing; where ``root`` holds runs
    (``attnkit demo`` writes ``runs/demo/none`` and ``runs/demo/bahdanau``), which to pick."""
    root = Path(root)
    runs = sorted(p.parent for p in root.glob("*/config.yaml")) if root.is_dir() else []
    if runs:
        names = ", ".join(str(p) for p in runs)
        runs_word = "runs" if len(runs) > 1 else "run"
        return f"{root} is not a run but holds the {runs_word} {names}: give one, e.g. {runs[-1]}"
    return f"{root / 'config.yaml'}: missing; is {root} a run directory?"
