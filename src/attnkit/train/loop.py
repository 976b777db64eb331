"""Training a translation model from an :class:`~attnkit.experiment.ExperimentConfig`.

Per epoch: token-count batches, teacher forcing, smoothed cross-entropy, gradient clipping, a
scheduler step; then validation loss and greedy BLEU, the best model kept by BLEU, the last
state saved for ``--resume``, and early stopping after ``patience`` epochs without progress.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from attnkit.data import TokenBatchSampler, collate
from attnkit.evaluate import score_corpus
from attnkit.experiment import ExperimentConfig
from attnkit.models.build import build_model
from attnkit.translation import translate_texts

from .checkpoint import average_checkpoints, load_model, load_trainer, save_model, save_trainer
from .losses import translation_loss
from .prepare import Prepared, prepare
from .rundir import RunDir
from .schedules import build_scheduler

log = logging.getLogger(__name__)


@dataclass
class TrainResult:
    """What a finished training run reports (``seconds``: the epochs' time, validation
    included, data preparation not)."""

    run_dir: Path
    best_epoch: int
    best_bleu: float | None
    best_loss: float
    epochs_run: int
    seconds: float
    n_parameters: int

    @classmethod
    def from_history(cls, run_dir: Path, history: list[dict], n_parameters: int) -> TrainResult:
        """Summarise per-epoch ``history`` (as in ``metrics.json``)."""
        best = pick_best(history)
        return cls(
            Path(run_dir),
            best["epoch"],
            best.get("valid_bleu"),
            best["valid_loss"],
            len(history),
            sum(h["seconds"] for h in history),
            n_parameters,
        )


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def _autocast(enabled: bool):
    return torch.autocast("cpu", dtype=torch.bfloat16) if enabled else contextlib.nullcontext()


def run_epoch(model, data: Prepared, sampler, optimizer, scheduler, cfg, *, progress: bool) -> dict:
    """One pass over the training data; returns mean loss per token and the step count."""
    model.train()
    pad = data.tokenizer.pad_id
    total, tokens, steps = 0.0, 0, 0
    batches = list(sampler)
    bar = tqdm(batches, desc="train", leave=False, disable=not progress, unit="batch")
    for index in bar:
        batch = collate([data.train[i] for i in index], pad_id=pad)
        with _autocast(cfg.train.bf16):
            out = model(batch.src, batch.src_mask, batch.tgt_in)
        loss_sum, n = translation_loss(
            out.logits.float(), batch.tgt_out, pad_id=pad, label_smoothing=cfg.train.label_smoothing
        )
        optimizer.zero_grad(set_to_none=True)
        (loss_sum / n).backward()
        if cfg.train.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.train.clip_norm)
        optimizer.step()
        if scheduler is not None and cfg.train.schedule in ("noam", "inverse_sqrt"):
            scheduler.step()
        total, tokens, steps = total + float(loss_sum.detach()), tokens + n, steps + 1
        bar.set_postfix(loss=f"{total / tokens:.3f}")
        if cfg.train.max_steps is not None and steps >= cfg.train.max_steps:
            break
    return {"train_loss": total / max(tokens, 1), "steps": steps}


@torch.no_grad()
def validate(model, data: Prepared, cfg: ExperimentConfig) -> dict:
    """Validation loss per token (no smoothing) and greedy BLEU/chrF."""
    model.eval()
    pad = data.tokenizer.pad_id
    total, tokens = 0.0, 0
    for index in TokenBatchSampler(data.valid, cfg.train.max_tokens, shuffle=False):
        batch = collate([data.valid[i] for i in index], pad_id=pad)
        loss_sum, n = translation_loss(
            model(batch.src, batch.src_mask, batch.tgt_in).logits, batch.tgt_out, pad_id=pad
        )
        total, tokens = total + float(loss_sum), tokens + n
    result = {"valid_loss": total / max(tokens, 1)}
    if cfg.train.valid_bleu:
        pairs = data.corpus.splits["valid"]
        hyps = translate_texts(
            model, data.tokenizer, [p.src for p in pairs], cfg.decode, beam_size=1
        )
        scores = score_corpus([h.text for h in hyps], [p.tgt for p in pairs])
        result.update(valid_bleu=scores.bleu, valid_chrf=scores.chrf)
    return result


def _optimizer(model, cfg: ExperimentConfig):
    kind = torch.optim.AdamW if cfg.train.optimiser == "adamw" else torch.optim.Adam
    return kind(
        model.parameters(),
        lr=cfg.train.learning_rate,
        betas=tuple(cfg.train.betas),
        weight_decay=cfg.train.weight_decay,
    )


def train(
    cfg: ExperimentConfig, run_dir: str | Path, *, resume: bool = False, progress: bool = True
) -> TrainResult:
    """Train ``cfg`` into ``run_dir`` (created); with ``resume`` continue from its last state."""
    run = RunDir(run_dir)
    if not resume and run.model.exists():
        raise FileExistsError(
            f"{run.root} already holds a trained model; pass --resume to continue it "
            "or choose another run directory"
        )
    if resume and not (run.last / "trainer.json").exists():
        raise FileNotFoundError(f"{run.last}: no saved training state to resume from")
    run.root.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.train.threads)
    seed_everything(cfg.train.seed)
    tokenizer = None
    if resume:
        from attnkit.data import Tokenizer

        tokenizer = Tokenizer.load(run.root)
    data = prepare(cfg.data, run.root, tokenizer)
    if not resume:
        run.save_config(cfg)
    tok = data.tokenizer
    model = build_model(cfg.model, tok.src_vocab_size, tok.tgt_vocab_size, tok.pad_id)
    optimizer = _optimizer(model, cfg)
    scheduler = build_scheduler(
        optimizer,
        cfg.train.schedule,
        warmup=cfg.train.warmup_steps,
        d_model=cfg.model.d_model,
        factor=cfg.train.plateau_factor,
        patience=cfg.train.plateau_patience,
    )
    history, start, step = [], 1, 0
    if resume:
        load_model(model, run.last / "model.safetensors")
        state = load_trainer(run.last, optimizer=optimizer, scheduler=scheduler)
        start, step = state["epoch"] + 1, state["step"]
        history = run.read_metrics().get("history", [])
        log.info("resuming %s after epoch %d (step %d)", run.root, state["epoch"], step)
    n_params = sum(p.numel() for p in model.parameters())
    log.info("model: %s, %d parameters", cfg.model.arch, n_params)
    sampler = TokenBatchSampler(data.train, cfg.train.max_tokens, seed=cfg.train.seed)
    writer = _tensorboard(run)
    for epoch in range(start, cfg.train.epochs + 1):
        sampler.set_epoch(epoch)
        t0 = time.perf_counter()
        stats = run_epoch(model, data, sampler, optimizer, scheduler, cfg, progress=progress)
        step += stats["steps"]
        stats.update(validate(model, data, cfg), epoch=epoch, step=step)
        stats.update(seconds=time.perf_counter() - t0, lr=optimizer.param_groups[0]["lr"])
        if scheduler is not None and cfg.train.schedule == "plateau":
            scheduler.step(stats["valid_loss"])
        history.append(stats)
        _log_epoch(stats, writer)
        save_model(model, run.epoch_checkpoint(epoch))
        _prune_epochs(run, epoch, keep=max(cfg.train.average_last, 1))
        best = pick_best(history)
        if best["epoch"] == epoch:
            save_model(model, run.model)
        save_model(model, run.last / "model.safetensors")
        save_trainer(
            run.last, optimizer=optimizer, scheduler=scheduler, step=step, epoch=epoch, extra={}
        )
        run.write_metrics(
            {"history": history, "best_epoch": best["epoch"], "n_parameters": n_params}
        )
        if epoch - best["epoch"] >= cfg.train.patience:
            log.info(
                "early stopping: no better validation result for %d epochs", cfg.train.patience
            )
            break
        if cfg.train.max_steps is not None and stats["steps"] >= cfg.train.max_steps:
            break
    if writer is not None:
        writer.close()
    _average(run, history, cfg.train.average_last)
    return TrainResult.from_history(run.root, history, n_params)


def pick_best(history: list[dict]) -> dict:
    """The best epoch: highest validation BLEU when measured, else lowest validation loss."""
    if "valid_bleu" in history[0]:
        return max(history, key=lambda h: (h["valid_bleu"], -h["valid_loss"]))
    return min(history, key=lambda h: h["valid_loss"])


def _prune_epochs(run: RunDir, epoch: int, keep: int) -> None:
    old = run.epoch_checkpoint(epoch - keep)
    if old.exists():
        old.unlink()


def _average(run: RunDir, history: list[dict], n: int) -> None:
    if n <= 1:
        return
    paths = [run.epoch_checkpoint(h["epoch"]) for h in history[-n:]]
    paths = [p for p in paths if p.exists()]
    if len(paths) >= 2:
        from safetensors.torch import save_file

        save_file(average_checkpoints(paths), str(run.averaged))
        log.info("averaged %d checkpoints into %s", len(paths), run.averaged)


def _tensorboard(run: RunDir):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is optional
        log.info("tensorboard is not installed; no TensorBoard logs")
        return None
    return SummaryWriter(str(run.tensorboard))


def _log_epoch(stats: dict, writer) -> None:
    bleu = f", valid BLEU {stats['valid_bleu']:.2f}" if "valid_bleu" in stats else ""
    log.info(
        "epoch %d: train loss %.3f, valid loss %.3f%s (%.0f s)",
        stats["epoch"],
        stats["train_loss"],
        stats["valid_loss"],
        bleu,
        stats["seconds"],
    )
    if writer is not None:
        for key in ("train_loss", "valid_loss", "valid_bleu", "valid_chrf", "lr"):
            if key in stats:
                writer.add_scalar(key, stats[key], stats["epoch"])
