"""Language modelling as an engine task: random blocks of the training text, the mean
cross-entropy per character (nats), validated as nanoGPT's ``estimate_loss`` does (the mean
loss of ``eval_iters`` batches of random validation blocks), so the figures compare.

The engine (:class:`~attnkit.engine.trainer.Trainer`) runs the loop: AdamW, the warm-up and
cosine schedule, clipping, precision, devices, kill-safe checkpoints and exact resume. An
epoch is ``eval_interval`` updates; its batches are block offsets drawn from
``(seed, epoch)``, so a resumed run draws the same ones.
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F

from attnkit.apps.gpt.config import GPTConfig
from attnkit.apps.gpt.data import CharVocab, Corpus, block_starts, blocks, read_corpus
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
        starts = block_starts(
            len(self.corpus.train), d.block_size, t.eval_interval * t.batch_size, g
        )
        return list(starts.split(t.batch_size))  # each (batch_size,)

    def units(self, batch: torch.Tensor) -> int:
        return batch.numel() * self.config.data.block_size  # characters predicted

    def collate(self, batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
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
        blocks, the same blocks at every validation."""
        return {"valid_loss": estimate_loss(model, self.corpus.valid, self.config, seed=0)}


@torch.no_grad()
def estimate_loss(model, ids: torch.Tensor, cfg: GPTConfig, seed: int = 0) -> float:
    """nanoGPT's ``estimate_loss`` on ``ids``: the mean of ``eval_iters`` batch losses, each
    the mean cross-entropy of ``batch_size`` random blocks (drawn from ``seed``)."""
    t, d = cfg.train, cfg.data
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
