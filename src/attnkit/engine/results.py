"""What rank 0 does at the end of an epoch: log, prune and average checkpoints; and the
summary of a finished run."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from safetensors.torch import save_file

from attnkit.engine.checkpoint import _atomic, average_checkpoints
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import pick_best

log = logging.getLogger(__name__)


@dataclass
class TrainResult:
    """What a finished training run reports (``seconds``: the epochs' time, validation
    included, data preparation not; ``best``: the best epoch's row of the history)."""

    run_dir: Path | None  # None: trained in memory
    best_epoch: int
    best: dict
    epochs_run: int
    seconds: float
    n_parameters: int
    history: list[dict] = field(default_factory=list)
    step_losses: list[float] = field(default_factory=list)  # per update, this session only
    final: dict = field(default_factory=dict)  # what the task's finish() measured
    device: str = "cpu"  # where it trained

    @classmethod
    def from_history(
        cls,
        run_dir: Path,
        history: list[dict],
        n_parameters: int,
        key: str = "valid_loss",
        mode: str = "min",
    ) -> TrainResult:
        """Summarise per-epoch ``history`` (as in ``metrics.json``)."""
        best = pick_best(history, key, mode)
        seconds = sum(h["seconds"] for h in history)
        root = Path(run_dir) if run_dir is not None else None
        return cls(root, best["epoch"], best, len(history), seconds, n_parameters, list(history))

    @property
    def best_bleu(self) -> float | None:
        return self.best.get("valid_bleu")

    @property
    def best_loss(self) -> float | None:
        return self.best.get("valid_loss")


def prune_epochs(run: RunDir, epoch: int, keep: int) -> None:
    """Delete the per-epoch weights older than the last ``keep`` epochs."""
    old = run.epoch_checkpoint(epoch - keep)
    if old.exists():
        old.unlink()


def average_last(run: RunDir, history: list[dict], n: int) -> None:
    """Average the last ``n`` epochs' weights into ``averaged.safetensors`` (atomically)."""
    if n <= 1 or not history:
        return
    paths = [run.epoch_checkpoint(h["epoch"]) for h in history[-n:]]
    paths = [p for p in paths if p.exists()]
    if len(paths) >= 2:
        mean = average_checkpoints(paths)
        _atomic(run.averaged, lambda p: save_file(mean, str(p)))
        log.info("averaged %d checkpoints into %s", len(paths), run.averaged)


def tensorboard(run: RunDir):
    """A TensorBoard writer under the run directory, or None without tensorboard."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is optional
        log.info("tensorboard is not installed; no TensorBoard logs")
        return None
    return SummaryWriter(str(Path(run.tensorboard)))


def log_epoch(stats: dict, writer, task=None) -> None:
    """One log line per epoch, and its numbers to TensorBoard."""
    scores = [(k, v) for k, v in stats.items() if k.startswith(("train_", "valid_"))]
    shown = [f"{k} {v:.4g}" for k, v in scores if k != "train_seconds"]  # the line ends in s
    log.info("epoch %d: %s (%.0f s)", stats["epoch"], ", ".join(shown), stats["seconds"])
    if writer is not None:
        for key, value in stats.items():
            if key not in ("epoch", "step") and isinstance(value, int | float):
                writer.add_scalar(key, value, stats["epoch"])
