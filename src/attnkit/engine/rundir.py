"""A run directory: everything needed to translate with a trained model, and nothing pickled.

::

    RUN_DIR/
      config.yaml            the experiment configuration (as trained)
      spm*.model             the sentencepiece tokenizer(s)
      model.safetensors      the best model (by validation BLEU, else loss)
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

from attnkit.apps.translation.config import ExperimentConfig, load_experiment
from attnkit.apps.translation.data import Tokenizer
from attnkit.apps.translation.models.build import build_model
from attnkit.config import ConfigError, save_yaml
from attnkit.engine.checkpoint import load_model, write_text
from attnkit.modules.seq2seq import Seq2SeqModel


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

    def epoch_checkpoint(self, epoch: int) -> Path:
        return self.root / "checkpoints" / f"epoch{epoch}.safetensors"

    def step_checkpoint(self, step: int) -> Path:
        """The directory of the complete training state after update ``step``."""
        return self.root / "checkpoints" / f"step-{step:08d}"

    def write_metrics(self, metrics: dict) -> None:
        write_text(self.metrics, json.dumps(metrics, indent=2))

    def read_metrics(self) -> dict:
        return json.loads(self.metrics.read_text(encoding="utf-8")) if self.metrics.exists() else {}

    def save_config(self, cfg: ExperimentConfig) -> None:
        save_yaml(cfg, self.config)


def load_run(
    root: str | Path, checkpoint: str = "best"
) -> tuple[ExperimentConfig, Tokenizer, Seq2SeqModel]:
    """Load a trained run: its config, tokenizer and model (``best``, ``averaged`` or ``last``).

    Raises :class:`FileNotFoundError` naming what is missing.
    """
    run = RunDir(root)
    if not run.root.is_dir():
        raise FileNotFoundError(f"{run.root}: not a run directory")
    if not run.config.exists():
        raise FileNotFoundError(f"{run.config}: missing; is {run.root} a run directory?")
    cfg = load_experiment(run.config)
    tokenizer = Tokenizer.load(run.root)
    model = build_model(
        cfg.model, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, tokenizer.pad_id
    )
    paths = {"best": run.model, "averaged": run.averaged, "last": run.last / "model.safetensors"}
    if checkpoint not in paths:
        raise ConfigError(f"unknown checkpoint {checkpoint!r}; choose one of {tuple(paths)}")
    load_model(model, paths[checkpoint])
    return cfg, tokenizer, model.eval()
