"""What rank 0 does at the end of an epoch: validate, log, pick the best epoch, average."""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import save_file

from attnkit.apps.translation.config import ExperimentConfig
from attnkit.apps.translation.data import TokenBatchSampler, collate
from attnkit.apps.translation.prepare import Prepared
from attnkit.apps.translation.translate import translate_texts
from attnkit.engine.checkpoint import _atomic, average_checkpoints
from attnkit.engine.losses import translation_loss
from attnkit.engine.rundir import RunDir
from attnkit.metrics import score_corpus

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
    step_losses: list[float] = field(default_factory=list)  # per update, this session only

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


@torch.no_grad()
def validate(model, data: Prepared, cfg: ExperimentConfig) -> dict:
    """Validation loss per token (no smoothing) and greedy BLEU/chrF.

    Greedy decoding runs on the CPU (:func:`~attnkit.apps.translation.translate.translate_texts`
    builds its
    batches there); a model on a GPU is copied to the CPU for it.
    """
    model.eval()
    device = next(model.parameters()).device
    pad = data.tokenizer.pad_id
    total, tokens = 0.0, 0
    for index in TokenBatchSampler(data.valid, cfg.train.max_tokens, shuffle=False):
        batch = collate([data.valid[i] for i in index], pad_id=pad).to(device)
        loss_sum, n = translation_loss(
            model(batch.src, batch.src_mask, batch.tgt_in).logits, batch.tgt_out, pad_id=pad
        )
        total, tokens = total + float(loss_sum), tokens + n
    result = {"valid_loss": total / max(tokens, 1)}
    if cfg.train.valid_bleu:
        decoder = model if device.type == "cpu" else copy.deepcopy(model).cpu()
        pairs = data.corpus.splits["valid"]
        hyps = translate_texts(
            decoder, data.tokenizer, [p.src for p in pairs], cfg.decode, beam_size=1
        )
        scores = score_corpus([h.text for h in hyps], [p.tgt for p in pairs])
        result.update(valid_bleu=scores.bleu, valid_chrf=scores.chrf)
    model.train()
    return result


def pick_best(history: list[dict]) -> dict:
    """The best epoch: highest validation BLEU when measured, else lowest validation loss."""
    if "valid_bleu" in history[0]:
        return max(history, key=lambda h: (h["valid_bleu"], -h["valid_loss"]))
    return min(history, key=lambda h: h["valid_loss"])


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


def log_epoch(stats: dict, writer) -> None:
    """One log line per epoch, and its scalars to TensorBoard."""
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
