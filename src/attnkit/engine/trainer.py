"""Training a translation model from an :class:`~attnkit.apps.translation.config.ExperimentConfig`.

Per update: token-count batches (one per process, ``update_freq`` of them accumulated),
teacher forcing, smoothed cross-entropy averaged over every target token of the update,
gradient clipping, an optimiser and scheduler step. Per epoch: validation loss and greedy BLEU,
the best model kept by BLEU, early stopping after ``patience`` epochs without progress.

Under ``torchrun`` the same loop runs data-parallel (:mod:`.distributed`); rank 0 alone logs,
validates and writes checkpoints. Checkpoints (:mod:`.snapshots`) hold everything needed to
continue bit for bit: model, optimiser, scheduler, every rank's RNG states and the data
position, written after each epoch and every ``checkpoint_every`` updates.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import random
import time
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from tqdm import tqdm

from attnkit.apps.translation.config import ExperimentConfig
from attnkit.apps.translation.data import TokenBatchSampler, Tokenizer, collate
from attnkit.apps.translation.data.batching import update_groups
from attnkit.apps.translation.models.build import build_model
from attnkit.apps.translation.prepare import prepare
from attnkit.engine import distributed, snapshots
from attnkit.engine.checkpoint import load_model, load_trainer, rng_state, save_model
from attnkit.engine.losses import translation_loss
from attnkit.engine.report import (
    TrainResult,
    average_last,
    log_epoch,
    pick_best,
    prune_epochs,
    tensorboard,
    validate,
)
from attnkit.engine.rundir import RunDir
from attnkit.engine.schedules import build_scheduler

log = logging.getLogger(__name__)
__all__ = ["TrainResult", "Trainer", "TrainingDiverged", "pick_best", "train", "validate"]


class TrainingDiverged(ValueError):
    """The loss or the gradient norm became NaN or infinite."""


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (the global state others may use)
    torch.manual_seed(seed)


def _optimizer(model, cfg: ExperimentConfig):
    kind = torch.optim.AdamW if cfg.train.optimiser == "adamw" else torch.optim.Adam
    return kind(
        model.parameters(),
        lr=cfg.train.learning_rate,
        betas=tuple(cfg.train.betas),
        weight_decay=cfg.train.weight_decay,
    )


Resume = bool | Literal["auto"]


class Trainer:
    """One training run of ``cfg`` into ``run_dir``, in this process (one rank of several
    under ``torchrun``). ``resume``: False (start; refuse a run directory that holds one),
    True (continue from the newest checkpoint) or ``"auto"`` (continue if there is one).
    Under ``torchrun --max-restarts`` a restarted job resumes automatically."""

    def __init__(
        self,
        cfg: ExperimentConfig,
        run_dir: str | Path,
        *,
        resume: Resume = False,
        progress: bool = True,
    ) -> None:
        self.cfg, self.run, self.progress = cfg, RunDir(run_dir), progress
        self.d = distributed.setup()
        self.step_losses: list[float] = []
        checkpoint = self.on_main(lambda: snapshots.find(self.run, resume))
        self.on_main(lambda: snapshots.check_writable(self.run.root))  # before any work
        t = cfg.train
        threads = distributed.threads_per_process(t.threads) if self.d.active else t.threads
        torch.set_num_threads(threads)
        if t.deterministic:
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed on CUDA
            torch.use_deterministic_algorithms(True)
        seed_everything(t.seed)
        self.data = self._prepare(resume=checkpoint is not None)
        tok = self.data.tokenizer
        self.model = build_model(cfg.model, tok.src_vocab_size, tok.tgt_vocab_size, tok.pad_id)
        self.model.to(self.d.device)
        self.optimizer = _optimizer(self.model, cfg)
        self.scheduler = build_scheduler(
            self.optimizer,
            t.schedule,
            warmup=t.warmup_steps,
            d_model=cfg.model.d_model,
            factor=t.plateau_factor,
            patience=t.plateau_patience,
        )
        need = snapshots.space_needed(
            self.model, keep=t.keep_checkpoints, average_last=t.average_last
        )
        self.on_main(lambda: snapshots.check_writable(self.run.root, need))
        self.n_params = sum(p.numel() for p in self.model.parameters())
        self.step, self.history = 0, []
        self.position = _start_of(1)
        if self.d.active:
            torch.manual_seed(t.seed + self.d.rank)  # different dropout on each rank
        if checkpoint is not None:
            self._load(Path(checkpoint))
        self.ddp = self.d.wrap(self.model)
        self.sampler = TokenBatchSampler(self.data.train, t.max_tokens, seed=t.seed)

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

    def _prepare(self, *, resume: bool):
        """Rank 0 trains (or reuses) the tokenizer and saves the config; the others then load
        the tokenizer it wrote (the run directory must be shared by all machines)."""
        root, box = self.run.root, []

        def first() -> None:
            root.mkdir(parents=True, exist_ok=True)
            box.append(prepare(self.cfg.data, root, Tokenizer.load(root) if resume else None))
            if not resume:
                self.run.save_config(self.cfg)

        self.on_main(first)
        return box[0] if box else prepare(self.cfg.data, root, Tokenizer.load(root))

    def _load(self, path: Path) -> None:
        load_model(self.model, path / "model.safetensors")
        state = load_trainer(
            path, optimizer=self.optimizer, scheduler=self.scheduler, rank=self.d.rank
        )
        extra = state["extra"]
        self.step = state["step"]
        self.history = extra.get("history", self.run.read_metrics().get("history", []))
        self.position = extra.get("position") or _start_of(state["epoch"] + 1)
        saved_world = extra.get("world", 1)
        if saved_world != self.d.world:
            log.warning(
                "%s was written by %d process(es), resumed by %d: the same data order, "
                "but dropout draws differ from an uninterrupted run",
                path,
                saved_world,
                self.d.world,
            )
            if self.d.active:
                torch.manual_seed(self.cfg.train.seed + self.d.rank + self.step)
        p = self.position
        log.info(
            "resuming %s at epoch %d, batch %d (update %d)", path, p["epoch"], p["batch"], self.step
        )

    # -- training -----------------------------------------------------------------------------
    def fit(self) -> TrainResult:
        """Train to the end (epochs, early stopping or ``max_steps``); returns the summary."""
        t = self.cfg.train
        log.info(
            "model: %s, %d parameters, %d process(es), update_freq %d",
            self.cfg.model.arch,
            self.n_params,
            self.d.world,
            t.update_freq,
        )
        writer = tensorboard(self.run) if self.d.is_main else None
        try:
            while self.position["epoch"] <= t.epochs and not self._finished():
                self._epoch(writer)
        finally:
            if writer is not None:
                writer.close()
        self.on_main(lambda: average_last(self.run, self.history, t.average_last))
        result = TrainResult.from_history(self.run.root, self.history, self.n_params)
        result.step_losses = list(self.step_losses)
        self.d.barrier()
        return result

    def _finished(self) -> bool:
        t = self.cfg.train
        if t.max_steps is not None and self.step >= t.max_steps:
            return True
        if not self.history:
            return False
        best = pick_best(self.history)
        return self.history[-1]["epoch"] - best["epoch"] >= t.patience

    def _epoch(self, writer) -> None:
        t, p = self.cfg.train, self.position
        epoch = p["epoch"]
        self.model.train()
        batches = self.sampler.batches(epoch)
        groups = update_groups(batches, self.d.world * t.update_freq, start=p["batch"])
        started = time.perf_counter() - p["seconds"]
        bar = tqdm(
            groups,
            desc=f"epoch {epoch}",
            leave=False,
            unit="update",
            disable=not (self.progress and self.d.is_main),
        )
        for group in bar:
            loss_sum, tokens = self._update(group)
            self.step += 1
            p["steps"] = p.get("steps", 0) + 1
            self.step_losses.append(loss_sum / tokens)
            p.update(
                batch=p["batch"] + len(group),
                loss_sum=p["loss_sum"] + loss_sum,
                tokens=p["tokens"] + tokens,
            )
            bar.set_postfix(loss=f"{p['loss_sum'] / p['tokens']:.3f}")
            last = p["batch"] >= len(batches) or self._finished()
            if t.checkpoint_every and self.step % t.checkpoint_every == 0 and not last:
                p["seconds"] = time.perf_counter() - started
                self._checkpoint(epoch_done=epoch - 1)
            if last:
                break
        stats = {"train_loss": p["loss_sum"] / max(p["tokens"], 1), "steps": p.get("steps", 0)}
        stats.update(self.on_main(lambda: validate(self.model, self.data, self.cfg)))
        stats.update(
            epoch=epoch,
            step=self.step,
            seconds=time.perf_counter() - started,
            lr=self.optimizer.param_groups[0]["lr"],
        )
        if self.scheduler is not None and t.schedule == "plateau":
            self.scheduler.step(stats["valid_loss"])
        self.history.append(stats)
        self.position = _start_of(epoch + 1)
        if self.d.is_main:
            log_epoch(stats, writer)
        self._checkpoint(epoch_done=epoch, epoch_end=True)

    def _update(self, group: list[list[int]]) -> tuple[float, int]:
        """One optimiser step on ``group`` (the batches of all ranks); returns the summed
        loss and target tokens over all of them, identical on every rank."""
        t, d, pad = self.cfg.train, self.d, self.data.tokenizer.pad_id
        mine = [(b, 1.0) for b in group[d.rank :: d.world]] or [(group[0], 0.0)]
        n_group = sum(len(self.data.train[i].tgt) + 1 for b in group for i in b)
        self.optimizer.zero_grad(set_to_none=True)
        local = 0.0
        for j, (index, weight) in enumerate(mine):
            with d.no_sync(self.ddp, skip=j < len(mine) - 1):
                batch = collate([self.data.train[i] for i in index], pad_id=pad).to(d.device)
                with _autocast(t.bf16, d.device):
                    out = self.ddp(batch.src, batch.src_mask, batch.tgt_in)
                loss_sum, _ = translation_loss(
                    out.logits.float(),
                    batch.tgt_out,
                    pad_id=pad,
                    label_smoothing=t.label_smoothing,
                )
                # DDP averages over ranks: scale by the world size to get the mean over tokens
                scaled = loss_sum if d.world == 1 else loss_sum * (weight * d.world)
                (scaled / n_group).backward()
            local += float(loss_sum.detach()) * weight
        (total,) = d.sum([local])
        where = f"update {self.step + 1} (epoch {self.position['epoch']})"
        if not math.isfinite(total):
            self._diverged(f"{where}: the training loss is {total}")
        if t.clip_norm > 0:
            norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), t.clip_norm))
            if not math.isfinite(norm):
                self._diverged(f"{where}: the gradient norm is {norm}")
        self.optimizer.step()
        if self.scheduler is not None and t.schedule in ("noam", "inverse_sqrt"):
            self.scheduler.step()
        return total, n_group

    def _diverged(self, what: str) -> None:
        last = self.run.last.resolve() if self.run.last.exists() else None
        kept = f"the last good checkpoint is {last}" if last else "no checkpoint was written yet"
        raise TrainingDiverged(
            f"{what}; training stopped before applying it, {kept}. Lower the learning rate or "
            "clip gradients, then --resume"
        )

    def _checkpoint(self, *, epoch_done: int, epoch_end: bool = False) -> None:
        """Every rank's RNG state to rank 0, which writes the checkpoint (all ranks wait)."""
        rng = self.d.gather(rng_state())
        extra = {
            "position": self.position,
            "history": self.history,
            "world": self.d.world,
            "update_freq": self.cfg.train.update_freq,
        }
        t = self.cfg.train

        def write() -> None:
            if epoch_end:
                save_model(self.model, self.run.epoch_checkpoint(epoch_done))
                prune_epochs(self.run, epoch_done, keep=max(t.average_last, 1))
                if pick_best(self.history)["epoch"] == epoch_done:
                    save_model(self.model, self.run.model)
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
                best = pick_best(self.history)["epoch"]
                self.run.write_metrics(
                    {"history": self.history, "best_epoch": best, "n_parameters": self.n_params}
                )

        self.on_main(write)


def _start_of(epoch: int) -> dict:
    """The data position at the start of ``epoch``, with the epoch's running totals."""
    return {"epoch": epoch, "batch": 0, "steps": 0, "loss_sum": 0.0, "tokens": 0, "seconds": 0.0}


def _autocast(enabled: bool, device: torch.device):
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


def train(
    cfg: ExperimentConfig, run_dir: str | Path, *, resume: Resume = False, progress: bool = True
) -> TrainResult:
    """Train ``cfg`` into ``run_dir`` (created); ``resume``: see :class:`Trainer`."""
    deterministic = torch.are_deterministic_algorithms_enabled()
    trainer = None
    try:
        trainer = Trainer(cfg, run_dir, resume=resume, progress=progress)
        return trainer.fit()
    finally:
        torch.use_deterministic_algorithms(deterministic)  # a library call leaves it as it was
        if trainer is not None:
            trainer.d.close()
