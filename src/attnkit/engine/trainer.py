"""The one training loop of attnkit: any :class:`~attnkit.engine.task.Task`, one run directory.

Per update: ``update_freq`` batches per process (of ``world`` processes) accumulated, the loss
averaged over every unit (token, example) of the update, the NaN stop, gradient clipping, an
optimiser and scheduler step. Per epoch: the task's validation, the best model kept by the
task's monitored score, early stopping after ``patience`` epochs without progress (logged with
its reason).

Under ``torchrun`` the same loop runs data-parallel (:mod:`.distributed`); rank 0 alone logs,
validates and writes checkpoints. Checkpoints (:mod:`.snapshots`) hold everything needed to
continue bit for bit: model, optimiser, scheduler, every rank's RNG states, the data position
and the task's own state, written after each epoch and every ``checkpoint_every`` updates.
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Literal

import torch
from tqdm import tqdm

from attnkit import devices, precision
from attnkit.engine import distributed, snapshots
from attnkit.engine.epochs import EpochEnd, update_groups
from attnkit.engine.loading import ready_groups
from attnkit.engine.position import DataPosition
from attnkit.engine.restore import Restoring
from attnkit.engine.results import TrainResult, average_last, tensorboard
from attnkit.engine.rundir import RunDir
from attnkit.engine.setup import build_optimiser, build_schedule, seed_everything, threads_for
from attnkit.engine.task import Task, monitor_of

log = logging.getLogger(__name__)
__all__ = ["Resume", "TrainResult", "Trainer", "TrainingDiverged", "fit", "update_groups"]

Resume = bool | Literal["auto", "exact"]


class TrainingDiverged(ValueError):
    """The loss or the gradient norm became NaN or infinite."""


class Trainer(EpochEnd, Restoring):
    """One training run of ``task`` into ``run_dir``, in this process (one rank of several
    under ``torchrun``). ``resume``: False (start; refuse a run directory that holds one),
    True (continue from the newest checkpoint, with the given config's training settings: see
    :mod:`~attnkit.engine.resume`), ``"exact"`` (the same, refusing any changed setting) or
    ``"auto"`` (continue if there is one). Under ``torchrun --max-restarts`` a restarted job
    resumes automatically."""

    def __init__(
        self, task: Task, run_dir: str | Path, *, resume: Resume = False, progress: bool = True
    ) -> None:
        self.task, self.cfg, self.progress = task, task.config, progress
        self.run = RunDir(run_dir) if run_dir is not None else None  # None: in memory
        if self.run is None and resume:
            raise ValueError("resuming needs the run directory of the run to continue")
        self.best_state: dict | None = None  # in memory: the best epoch's weights
        self.t = t = task.config.train
        self.d = distributed.setup(devices.pick(t.device, field="train.device"))
        self.exact = resume == "exact"
        self.step_losses: list[float] = []
        self.stop_reasons: list[str] = []  # why training stopped (logged once each)
        checkpoint = None
        if self.run is not None:
            checkpoint = self.on_main(lambda: snapshots.find(self.run, resume))
            self.on_main(lambda: snapshots.check_writable(self.run.root))  # before any work
        torch.set_num_threads(threads_for(t, self.d))
        self.amp = precision.choose(t.precision, self.d.device, field="train.precision")
        self.scaler = self.amp.scaler(self.d.device)  # fp16 only
        if t.deterministic:
            torch.use_deterministic_algorithms(True)
        seed_everything(t.seed)
        self._prepare(resume=checkpoint is not None)
        self.model = task.build_model().to(self.d.device)
        self.optimizer = build_optimiser(self.model, t)
        self.batches_per_epoch = len(task.epoch_batches(1))
        if self.batches_per_epoch == 0:  # nothing to learn from: never write an untrained model
            raise ValueError(
                f"{self.cfg.name}: no training examples (an epoch has no batches); check the "
                "data section of the config and the files it names"
            )
        self.scheduler = build_schedule(self.optimizer, t, task, self._total_updates())
        need = snapshots.space_needed(
            self.model, keep=t.keep_checkpoints, average_last=t.average_last
        )
        if self.run is not None:
            self.on_main(lambda: snapshots.check_writable(self.run.root, need))
        self.n_params = sum(p.numel() for p in self.model.parameters())
        self.step, self.history, self.position = 0, [], DataPosition.start_of(1)
        if self.d.active:
            torch.manual_seed(t.seed + self.d.rank)  # different dropout on each rank
        if checkpoint is not None:
            self._load(Path(checkpoint))
            self._restore_epoch_end()
        self.ddp = self.d.wrap(self.model)
        if t.compile:  # the forward pass compiled; self.model keeps the weights' names
            self.ddp = torch.compile(self.ddp)

    # -- set-up -------------------------------------------------------------------------------
    def on_main(self, work):
        """``work()`` on rank 0 only; its result (or its failure) reaches every rank."""
        result, error = None, None
        if self.d.is_main:
            try:
                result = work()
            except Exception as err:  # re-raised on rank 0, reported on the others
                error = err
        payload = self.d.broadcast((result, None if error is None else f"{error}"))
        if error is not None:
            raise error
        if payload[1] is not None:
            raise distributed.OtherRankFailed(f"rank 0 stopped: {payload[1]}")
        return payload[0]

    def _prepare(self, *, resume: bool) -> None:
        """Rank 0 prepares the task (data, vocabulary files) and saves the config; the others
        then prepare from what it wrote (the run directory must be shared by all machines)."""

        if self.run is None:
            self.task.prepare(None, resume=False)
            return

        def first() -> None:
            self.run.root.mkdir(parents=True, exist_ok=True)
            self.task.prepare(self.run, resume=resume)
            if not resume:
                self.run.save_config(self.cfg)

        self.on_main(first)
        if not self.d.is_main:
            self.task.prepare(self.run, resume=True)

    def _total_updates(self) -> int:
        per_update = self.d.world * self.t.update_freq
        total = self.t.epochs * math.ceil(self.batches_per_epoch / per_update)
        return min(total, self.t.max_steps) if self.t.max_steps else total

    # -- training -----------------------------------------------------------------------------
    def fit(self) -> TrainResult:
        """Train to the end (epochs, early stopping, ``max_steps`` or ``max_minutes``)."""
        t = self.t
        log.info(
            "model: %s, %d parameters, %d process(es), update_freq %d, on %s in %s",
            type(self.model).__name__,
            self.n_params,
            self.d.world,
            t.update_freq,
            self.d.device,
            self.amp.name,
            extra={"stage": "training"},  # set-up done: a console holding lines prints them
        )
        durable = self.run is not None
        writer = tensorboard(self.run) if durable and self.d.is_main and t.tensorboard else None
        try:
            while self.position.epoch <= t.epochs and not self._finished():
                self._epoch(writer)
        finally:
            if writer is not None:
                writer.close()
        if durable:
            self.on_main(lambda: average_last(self.run, self.history, t.average_last))
        root = self.run.root if durable else None
        result = TrainResult.from_history(root, self.history, self.n_params, *monitor_of(self.task))
        result.step_losses = list(self.step_losses)
        result.device = str(self.d.device)
        self.on_main(lambda: self._finish(result))
        self.d.barrier()
        return result

    def _epoch(self, writer) -> None:
        t, p = self.t, self.position
        epoch = p.epoch
        self.model.train()
        batches = self.task.epoch_batches(epoch)
        groups = update_groups(batches, self.d.world * t.update_freq, start=p.batch)
        started = time.perf_counter() - p.seconds
        show = self.progress and self.d.is_main
        bar = tqdm(groups, desc=f"epoch {epoch}", leave=False, unit="update", disable=not show)
        ready = ready_groups(
            self.task,
            [self._mine(group) for group in groups],
            workers=t.workers,
            pin=self.d.device.type == "cuda",
            seed=t.seed * 1_000_003 + epoch * 10_007 + p.batch,
        )
        for group, mine in zip(bar, ready, strict=False):
            loss_sum, units, stats = self._update(group, mine)
            self.step += 1
            self.step_losses.append(loss_sum / max(units, 1e-12))
            p.advance(len(group), loss_sum, units, stats)
            bar.set_postfix(loss=f"{p.mean_loss:.3f}")
            p.seconds = time.perf_counter() - started
            last = p.batch >= len(batches) or self._finished(during_epoch=True)
            if t.checkpoint_every and self.step % t.checkpoint_every == 0 and not last:
                self._checkpoint(epoch_done=epoch - 1)
            if last:
                break
        self._end_epoch(epoch, started, writer)

    def _mine(self, group: list) -> list[tuple]:
        """This rank's batches of ``group`` with weight 1 (or the first with weight 0, when
        the group has fewer batches than ranks: every rank must take part in the update)."""
        d = self.d
        return [(b, 1.0) for b in group[d.rank :: d.world]] or [(group[0], 0.0)]

    def _update(self, group: list, mine: list[tuple]) -> tuple[float, float, dict]:
        """One optimiser step on ``group`` (the batches of all ranks; ``mine``: this rank's,
        collated); returns the summed loss and units over all of them (identical on every
        rank) and this rank's stats."""
        t, d = self.t, self.d
        n_group = float(sum(self.task.units(b) for b in group))
        self.optimizer.zero_grad(set_to_none=True)
        local, stats = 0.0, {}
        for j, (batch, weight) in enumerate(mine):
            with d.no_sync(self.ddp, skip=j < len(mine) - 1):
                with self.amp.autocast(d.device):
                    out = self.task.loss(self.ddp, batch)
                # DDP averages over ranks: scale by the world size to get the mean over units
                scaled = out.total if d.world == 1 else out.total * (weight * d.world)
                self._backward(scaled / n_group)
            local += float(out.total.detach()) * weight
            for key, value in out.stats.items():
                stats[key] = stats.get(key, 0.0) + value * weight / len(mine)
        (total,) = d.sum([local])
        where = f"update {self.step + 1} (epoch {self.position.epoch})"
        if not math.isfinite(total):
            self._diverged(f"{where}: the training loss is {total}")
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)  # clip the true gradients
        if t.clip_norm > 0:
            norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), t.clip_norm))
            if not math.isfinite(norm) and self.scaler is None:  # fp16: the scaler skips it
                self._diverged(f"{where}: the gradient norm is {norm}")
        if self.scaler is not None:
            self.scaler.step(self.optimizer)  # skipped where fp16 gradients overflowed
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.scheduler is not None and t.schedule != "plateau":
            self.scheduler.step()
        self.task.after_update(stats)
        return total, n_group, stats

    def _backward(self, loss: torch.Tensor) -> None:
        """The backward pass; in fp16 through the gradient scaler (Micikevicius et al. 2018)."""
        (loss if self.scaler is None else self.scaler.scale(loss)).backward()

    def _diverged(self, what: str) -> None:
        last = self.run.last.resolve() if self.run and self.run.last.exists() else None
        kept = f"the last good checkpoint is {last}" if last else "no checkpoint was written yet"
        raise TrainingDiverged(
            f"{what}; training stopped before applying it, {kept}. Lower the learning rate or "
            "clip gradients, then --resume"
        )


def fit(
    task: Task, run_dir: str | Path | None = None, *, resume: Resume = False, progress: bool = True
) -> TrainResult:
    """Train ``task`` into ``run_dir`` (created); ``resume``: see :class:`Trainer`. Leaves
    torch's thread count and determinism setting as they were.

    With ``run_dir=None`` it trains in memory: nothing touches the disk (no config, no
    checkpoints, no metrics file; the task's ``prepare`` and ``finish`` get ``run=None``), the
    best epoch's weights are kept in memory and loaded into the model at the end (e.g. an
    online update of a detector between two detections)."""
    deterministic, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    trainer = None
    try:
        trainer = Trainer(task, run_dir, resume=resume, progress=progress)
        return trainer.fit()
    finally:
        torch.use_deterministic_algorithms(deterministic)  # a library call leaves it as it was
        torch.set_num_threads(threads)
        if trainer is not None:
            trainer.d.close()
