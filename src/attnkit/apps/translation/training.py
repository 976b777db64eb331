"""Translation as an engine task: token-count batches, teacher forcing, label-smoothed
cross-entropy over every target token, validation loss and greedy BLEU.

::

    from attnkit.apps.translation.training import train
    result = train(load_experiment("configs/multi30k-bahdanau.yaml"), "runs/bahdanau")
"""

from __future__ import annotations

from pathlib import Path

import torch

from attnkit.apps.translation.align.guided import (
    batch_targets,
    guidance_targets,
    guided_alignment_loss,
    head_weights,
)
from attnkit.apps.translation.config import TranslationConfig
from attnkit.apps.translation.data import TokenBatchSampler, Tokenizer, collate
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.apps.translation.models.build import build_model
from attnkit.apps.translation.prepare import Prepared, prepare
from attnkit.engine.losses import token_cross_entropy
from attnkit.engine.results import TrainResult
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task
from attnkit.engine.trainer import Resume, fit
from attnkit.metrics import score_corpus


class TranslationTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a translation experiment: the best epoch is
    the one of highest greedy validation BLEU (``train.valid_bleu``), else of lowest validation
    loss."""

    monitor, mode = "valid_bleu", "max"

    def __init__(self, cfg: TranslationConfig) -> None:
        self.config = cfg
        self.data: Prepared | None = None
        self.guidance: dict[int, torch.Tensor] | None = None  # G per pair index (align/guided.py)
        self.model_width = cfg.model.d_model  # for the noam schedule
        if not cfg.train.valid_bleu:  # no BLEU measured: the loss picks
            self.monitor, self.mode = "valid_loss", "min"

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        """Load and clean the corpus; train the tokenizer (or reuse the run's when resuming)."""
        tokenizer = Tokenizer.load(run.root) if resume else None
        self.data = prepare(self.config.data, run.root, tokenizer)  # refuses empty splits
        guide = self.config.train.guided_alignment
        if guide.file is not None:
            pairs = [(p.src, p.tgt) for p in self.data.corpus.train]
            tok = self.data.tokenizer
            self.guidance = guidance_targets(
                tok, pairs, guide.file, self.data.train, guide.one_based
            )

    def build_model(self) -> torch.nn.Module:
        tok = self.data.tokenizer
        return build_model(self.config.model, tok.src_vocab_size, tok.tgt_vocab_size, tok.pad_id)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        t = self.config.train
        return TokenBatchSampler(self.data.train, t.max_tokens, seed=t.seed).batches(epoch)

    def units(self, batch: list[int]) -> int:
        """Target tokens of the batch, ``</s>`` included."""
        return sum(len(self.data.train[i].tgt) + 1 for i in batch)

    def loss(self, model, batch: list[int]) -> Loss:
        pad = self.data.tokenizer.pad_id
        device = next(model.parameters()).device
        b = collate([self.data.train[i] for i in batch], pad_id=pad).to(device)
        out = model(b.src, b.src_mask, b.tgt_in, need_weights=self.guidance is not None)
        loss_sum, n = token_cross_entropy(
            out.logits.float(),
            b.tgt_out,
            pad_id=pad,
            label_smoothing=self.config.train.label_smoothing,
        )
        if self.guidance is None:
            return Loss(loss_sum, n)
        guide = self.config.train.guided_alignment
        weights = head_weights(out.attention, guide.layer, guide.head)  # (B, T, S)
        rows = [self.guidance[int(n)] for n in b.indices]  # G per pair, in batch order
        target = batch_targets(rows, *weights.shape[1:])  # (B, T, S)
        align = guided_alignment_loss(weights, target.to(device))
        stats = {"train_align_loss": float(align.detach()) / n}
        return Loss(loss_sum + guide.weight * align, n, stats)

    def validate(self, model) -> dict:
        return validate(model, self.data, self.config)


@torch.no_grad()
def validate(model, data: Prepared, cfg: TranslationConfig) -> dict:
    """Validation loss per token (no smoothing) and greedy BLEU/chrF (an empty validation
    split gives ``{}``: the last epoch is then kept).

    Greedy decoding runs on the model's device, in place
    (:func:`~attnkit.apps.translation.decode.translate.translate_texts` moves its batches
    there).
    """
    if not data.valid:
        return {}
    model.eval()
    device = next(model.parameters()).device
    pad = data.tokenizer.pad_id
    total, tokens = 0.0, 0
    for index in TokenBatchSampler(data.valid, cfg.train.max_tokens, shuffle=False):
        batch = collate([data.valid[i] for i in index], pad_id=pad).to(device)
        logits = model(batch.src, batch.src_mask, batch.tgt_in).logits
        loss_sum, n = token_cross_entropy(logits, batch.tgt_out, pad_id=pad)
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


def train(
    cfg: TranslationConfig, run_dir: str | Path, *, resume: Resume = False, progress: bool = True
) -> TrainResult:
    """Train ``cfg`` into ``run_dir`` (created); ``resume``: see
    :class:`~attnkit.engine.trainer.Trainer`."""
    return fit(TranslationTask(cfg), run_dir, resume=resume, progress=progress)
