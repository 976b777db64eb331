"""What the :class:`~attnkit.engine.trainer.Trainer` does between epochs: validate, keep the
best model, log, decide whether to stop (and say why), and write the kill-safe checkpoint."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from attnkit.engine import snapshots
from attnkit.engine.checkpoint import load_model, rng_state, save_model
from attnkit.engine.position import DataPosition
from attnkit.engine.results import TrainResult, log_epoch, prune_epochs
from attnkit.engine.task import monitor_of, pick_best

log = logging.getLogger(__name__)


def update_groups(batches: Sequence, size: int, *, start: int = 0) -> list[list]:
    """Consecutive groups of ``size`` batches from ``batches[start:]``, one group per update.

    Data-parallel training with ``W`` processes and ``update_freq`` F uses ``size = W * F``:
    rank ``r`` takes ``group[r::W]`` (whole batches, round-robin), so one update covers ``W * F``
    batches. The last group may be shorter.
    """
    if size < 1:
        raise ValueError(f"group size must be positive, got {size}")
    return [list(batches[i : i + size]) for i in range(start, len(batches), size)]


class EpochEnd:
    """The end-of-epoch half of the Trainer (mixed in; uses its attributes)."""

    def best(self) -> dict:
        return pick_best(self.history, *monitor_of(self.task))

    def _end_epoch(self, epoch: int, started: float, writer) -> None:
        p, t = self.position, self.t
        stats = {"train_loss": p.mean_loss, "steps": p.steps, "train_seconds": p.seconds}
        stats.update({k: v / max(p.steps, 1) for k, v in p.stats.items()})
        stats.update(self.on_main(lambda: self.task.validate(self.model)))
        self.model.train()
        stats.update(
            epoch=epoch,
            step=self.step,
            seconds=time.perf_counter() - started,
            lr=self.optimizer.param_groups[0]["lr"],
        )
        if monitor_of(self.task)[0] not in stats and epoch == 1 and self.d.is_main:
            plateau = "; the plateau schedule follows the training loss"
            log.log(
                logging.WARNING if self.task.validates else logging.DEBUG,
                "no validation data: the model of the last epoch is kept as the model%s",
                plateau if t.schedule == "plateau" else "",
            )
        if self.scheduler is not None and t.schedule == "plateau":
            self.scheduler.step(stats.get("valid_loss", stats["train_loss"]))
        self.history.append(stats)
        self.position = DataPosition.start_of(epoch + 1)
        if self.d.is_main:
            log_epoch(stats, writer, self.task)
        self._checkpoint(epoch_done=epoch, epoch_end=True)

    def _finish(self, result: TrainResult) -> None:
        """The best weights back into the model, then the task's final scores into the
        result and ``metrics.json`` (with the training time and the device)."""
        if self.run is None:
            if self.best_state is not None:
                self.model.load_state_dict(self.best_state)
            result.final.update(self.task.finish(None, self.model, result) or {})
            return
        if self.run.model.exists():
            load_model(self.model, self.run.model)
        final = self.task.finish(self.run, self.model, result) or {}
        result.final.update(final)
        where = {"seconds": result.seconds, "device": result.device}
        self.run.write_metrics({**self.run.read_metrics(), **where, **final})

    def _finished(self, *, during_epoch: bool = False) -> bool:
        """Whether to stop now; says why once, when it first decides so."""
        reason = self._stop_reason(during_epoch)
        if reason and self.d.is_main and reason not in self.stop_reasons:
            log.info("stopping: %s", reason)
            self.stop_reasons.append(reason)
        return reason is not None

    def _stop_reason(self, during_epoch: bool) -> str | None:
        t = self.t
        if t.max_steps is not None and self.step >= t.max_steps:
            return f"reached train.max_steps = {t.max_steps} updates"
        seconds = sum(h["seconds"] for h in self.history) + self.position.seconds
        if t.max_minutes is not None and seconds >= 60 * t.max_minutes:
            return f"trained {seconds / 60:.1f} minutes (train.max_minutes = {t.max_minutes})"
        if during_epoch or not self.history:
            return None
        key, _ = monitor_of(self.task)
        best = self.best()
        waited = self.history[-1]["epoch"] - best["epoch"]
        if key in best and waited >= t.patience:
            return (
                f"{key} has not improved for {waited} epochs (train.patience = {t.patience}; "
                f"best {best[key]:.4g} at epoch {best['epoch']})"
            )
        return None

    def _checkpoint(self, *, epoch_done: int, epoch_end: bool = False) -> None:
        """Every rank's RNG state to rank 0, which writes the checkpoint (all ranks wait).
        In memory (no run directory) only the best epoch's weights are kept, as a copy."""
        if self.run is None:
            if epoch_end and self.best()["epoch"] == epoch_done:
                self.best_state = {
                    k: v.detach().clone() for k, v in self.model.state_dict().items()
                }
            return
        rng = self.d.gather(rng_state())
        extra = {
            "position": self.position.as_dict(),
            "history": self.history,
            "world": self.d.world,
            "update_freq": self.t.update_freq,
        }
        extra["task"] = self.task.state_dict()
        if self.scaler is not None:  # fp16: the loss scale and its growth counter
            extra["scaler"] = self.scaler.state_dict()
        self.on_main(lambda: self._write(epoch_done, epoch_end, extra, rng))

    def _write(self, epoch_done: int, epoch_end: bool, extra: dict, rng: list) -> None:
        """The resumable checkpoint first (atomic), then the epoch's and the best weights: a
        kill between the two is repaired on resume (:meth:`_restore_epoch_end`)."""
        t = self.t
        snapshots.write(
            self.run,
            model=self.model,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            step=self.step,
            epoch=epoch_done,
            extra=extra,
            rng=rng,
            keep=t.keep_checkpoints,
        )
        if epoch_end:
            self._save_epoch_weights(epoch_done)
            self.run.write_metrics(
                {
                    "history": self.history,
                    "best_epoch": self.best()["epoch"],
                    "n_parameters": self.n_params,
                }
            )

    def _save_epoch_weights(self, epoch: int) -> None:
        save_model(self.model, self.run.epoch_checkpoint(epoch))
        prune_epochs(self.run, epoch, keep=max(self.t.average_last, 1))
        if self.best()["epoch"] == epoch:
            save_model(self.model, self.run.model)

    def _restore_epoch_end(self) -> None:
        """After loading a checkpoint written at the end of an epoch: write that epoch's
        weights again, in case the run was killed before it had written them."""
        if self.history and self.position.batch == 0 and self.d.is_main:
            last = self.history[-1]["epoch"]
            if not self.run.epoch_checkpoint(last).exists() or not self.run.model.exists():
                self._save_epoch_weights(last)
