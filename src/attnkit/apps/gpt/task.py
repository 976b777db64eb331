"""Language modelling as an engine task: random blocks of the training text, the mean
cross-entropy per character (nats), validated as nanoGPT's ``estimate_loss`` does (the mean
loss of ``eval_iters`` batches of random validation blocks), so the figures compare.

The engine (:class:`~attnkit.engine.trainer.Trainer`) runs the loop: AdamW, the warm-up and
cosine schedule, clipping, precision, devices, kill-safe checkpoints and exact resume. An
epoch is ``eval_interval`` updates; its batches are block offsets drawn from
``(seed, epoch)``, so a resumed run draws the same ones.

Source ``repeated`` (random tokens, then the same again: Olsson et al. 2022's setting for
induction heads): an epoch's batches are fresh rows from ``(seed, epoch)``, and each
validation scores a fixed set of rows: the loss overall, on the first copy and on the repeat,
and the best head's prefix-matching score (:mod:`attnkit.apps.gpt.heads`), so the history in
``metrics.json`` draws the phase change.
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F

from attnkit.apps.gpt.config import GPTConfig
from attnkit.apps.gpt.data import (
    CharVocab,
    Corpus,
    block_starts,
    blocks,
    read_corpus,
    repeated_rows,
)
from attnkit.apps.gpt.heads import head_scores
from attnkit.apps.gpt.model import GPT
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task

log = logging.getLogger(__name__)
VOCAB_FILE = "vocab.json"


class GPTTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a language-model run."""

    monitor = "valid_loss"
    mode = "min"

    def __init__(self, cfg: GPTConfig, corpus: Corpus | None = None) -> None:
        self.config = cfg
        self.corpus = corpus
        self.model_width = cfg.model.width

    def prepare(self, run: RunDir | None, *, resume: bool) -> None:
        saved = None if run is None else run.root / VOCAB_FILE
        vocab = CharVocab.load(saved) if resume and saved and saved.is_file() else None
        if self.corpus is None:
            self.corpus = read_corpus(self.config.data, vocab)
        if saved is not None and not resume:
            self.corpus.vocab.save(saved)
        c = self.corpus
        log.info(
            "%s: %d characters for training, %d for validation, a vocabulary of %d",
            c.source,
            len(c.train),
            len(c.valid),
            len(c.vocab),
        )

    def build_model(self) -> GPT:
        d = self.config.data
        return GPT(self.config.model, len(self.corpus.vocab), d.block_size)

    def epoch_batches(self, epoch: int) -> list[torch.Tensor]:
        """``eval_interval`` batches of block offsets, a pure function of ``(seed, epoch)``."""
        t, d = self.config.train, self.config.data
        g = torch.Generator().manual_seed(t.seed * 1_000_003 + epoch)
        if d.source == "repeated":
            n = t.eval_interval * t.batch_size
            rows = repeated_rows(n, d.half, d.vocab_size, g, d.min_period)  # (N, T + 1)
            return list(rows.split(t.batch_size))  # each (batch_size, T + 1)
        starts = block_starts(
            len(self.corpus.train), d.block_size, t.eval_interval * t.batch_size, g
        )
        return list(starts.split(t.batch_size))  # each (batch_size,)

    def units(self, batch: torch.Tensor) -> int:
        return len(batch) * self.config.data.block_size  # characters predicted

    def collate(self, batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if batch.dim() == 2:  # source repeated: the rows themselves
            return batch[:, :-1], batch[:, 1:]  # (B, T) each
        return blocks(self.corpus.train, batch, self.config.data.block_size)  # (B, T) each

    def loss(self, model, batch) -> Loss:
        x, y = batch
        device = next(model.parameters()).device
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = model(x).logits  # (B, T, V)
        total = F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), reduction="sum")
        return Loss(total, y.numel())

    @torch.no_grad()
    def validate(self, model) -> dict[str, float]:
        """The mean validation loss (nats per character) over ``eval_iters`` batches of random
        blocks, the same blocks at every validation (source ``repeated``:
        :func:`validate_repeated`)."""
        if self.config.data.source == "repeated":
            return validate_repeated(model, self.corpus.valid, self.config)
        return {"valid_loss": estimate_loss(model, self.corpus.valid, self.config, seed=0)}


@torch.no_grad()
def estimate_loss(model, ids: torch.Tensor, cfg: GPTConfig, seed: int = 0) -> float:
    """nanoGPT's ``estimate_loss`` on ``ids``: the mean of ``eval_iters`` batch losses, each
    the mean cross-entropy of ``batch_size`` random blocks (drawn from ``seed``). Source
    ``repeated``: the mean over every row of ``ids`` (rows laid end to end)."""
    t, d = cfg.train, cfg.data
    if d.source == "repeated":
        return float(row_losses(model, _rows(ids, d.block_size), t.batch_size).mean())
    g = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    losses = []
    for _ in range(t.eval_iters):
        x, y = blocks(ids, block_starts(len(ids), d.block_size, t.batch_size, g), d.block_size)
        logits = model(x.to(device)).logits  # (B, T, V)
        losses.append(F.cross_entropy(logits.flatten(0, 1).float(), y.to(device).flatten()))
    model.train(was_training)
    return float(torch.stack(losses).mean())


def _rows(ids: torch.Tensor, block_size: int) -> torch.Tensor:
    return ids.view(-1, block_size + 1)  # (N, T + 1)


@torch.no_grad()
def row_losses(model, rows: torch.Tensor, batch_size: int) -> torch.Tensor:
    """The cross-entropy ``(N, T)`` of every position of ``rows (N, T + 1)`` (inputs
    ``rows[:, :-1]``, targets ``rows[:, 1:]``), ``batch_size`` rows at a time."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    losses = []
    for chunk in rows.split(batch_size):
        x, y = chunk[:, :-1].to(device), chunk[:, 1:].to(device)  # (B, T) each
        logits = model(x).logits  # (B, T, V)
        losses.append(F.cross_entropy(logits.transpose(1, 2).float(), y, reduction="none"))
    model.train(was_training)
    return torch.cat(losses).cpu()  # (N, T)


@torch.no_grad()
def validate_repeated(model, ids: torch.Tensor, cfg: GPTConfig) -> dict[str, float]:
    """Scores of the ``repeated`` rows ``ids`` (laid end to end): ``valid_loss`` (every
    position), ``first_half_loss`` (predicting the first copy's tokens 2 .. half),
    ``repeat_loss`` (predicting the repeat's tokens from its second on: what an induction head
    can copy), ``prefix_matching`` (Olsson et al. 2022: the best head's, over the layers after
    the first, or the only layer; ``prefix_matching_layer1``: the first layer's, where a
    fixed-offset head can solve one period) and ``previous_token`` (the first layer's best
    head)."""
    d, t = cfg.data, cfg.train
    rows = _rows(ids, d.block_size)  # (N, T + 1)
    per_position = row_losses(model, rows, t.batch_size).mean(0)  # (T,)
    second = torch.arange(d.block_size) >= d.half  # (T,): the queries of the repeat
    scores = head_scores(model, rows[:, :-1], second, batch_size=t.batch_size, with_copying=False)
    prefix = scores.prefix_matching  # (L, H)
    return {
        "valid_loss": float(per_position.mean()),
        "first_half_loss": float(per_position[: d.half - 1].mean()),
        "repeat_loss": float(per_position[d.half :].mean()),
        "prefix_matching": float(prefix[1:].max() if len(prefix) > 1 else prefix.max()),
        "prefix_matching_layer1": float(prefix[0].max()),
        "previous_token": float(scores.previous_token[0].max()),
    }
