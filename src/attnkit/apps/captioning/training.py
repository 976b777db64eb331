"""Captioning as an engine task: Show, Attend and Tell (Xu et al. 2015) on generated scenes.

An epoch is ``train.updates_per_epoch`` batches of scenes drawn with replacement (a pure
function of the seed and the epoch, so a resumed run continues bit for bit); each batch's loss
is :func:`~attnkit.apps.captioning.losses.caption_loss` (teacher-forced cross-entropy, the
doubly stochastic penalty of eq. (14) for soft attention, REINFORCE and the entropy bonus of
§4.1 for hard attention). The REINFORCE moving-average baseline is the task's state: updated
after every optimiser step and checkpointed with the run. Validation decodes the validation
scenes greedily; the best epoch is the one with the highest ``valid_select``, exact match
first and BLEU to break ties. ::

    from attnkit.apps.captioning.training import train
    result = train(load_experiment("configs/scenes-soft-small.yaml"), "runs/scenes-soft-small")
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from attnkit.apps.captioning.config import CaptioningConfig
from attnkit.apps.captioning.data import epoch_batches, scenes_for, tensors
from attnkit.apps.captioning.inference import build, caption_scenes
from attnkit.apps.captioning.losses import caption_loss
from attnkit.apps.captioning.scenes import PAD, Vocabulary
from attnkit.apps.captioning.views import score_captions
from attnkit.engine.results import TrainResult
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss
from attnkit.engine.trainer import Resume, fit


class CaptioningTask:
    """The :class:`~attnkit.engine.task.Task` of a captioning experiment."""

    monitor, mode = "valid_select", "max"

    def __init__(self, cfg: CaptioningConfig) -> None:
        self.config = cfg
        self.vocab = Vocabulary.for_scenes()
        self.images = self.tokens = None  # the training split, (N, 3, S, S) and (N, T+1)
        self.valid = []
        # b of Xu et al. §4.1: the moving average of log p(y|s,a); None until the first reward
        self.baseline: float | None = None
        self.updates = 0  # optimiser steps so far: the Gumbel temperature's clock

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        """Generate the training and validation scenes; save the vocabulary."""
        if not resume:
            self.vocab.save(run.root / "vocab.json")
        self.images, self.tokens = tensors(scenes_for(self.config, "train"), self.vocab)
        self.valid = scenes_for(self.config, "valid")

    def build_model(self) -> torch.nn.Module:
        return build(self.config, self.vocab)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        t = self.config.train
        return epoch_batches(
            len(self.images), seed=t.seed, epoch=epoch, batch_size=t.batch_size,
            n_batches=t.updates_per_epoch * t.update_freq * _world(),
        )  # fmt: skip

    def units(self, batch: list[int]) -> int:
        """One per batch: :func:`caption_loss` is already a mean over the batch's tokens, so
        every batch weighs the same, as in the hand-written loop this replaced."""
        return 1

    def loss(self, model, batch: list[int]) -> Loss:
        t, cfg = self.config.train, self.config.model
        device = next(model.parameters()).device
        n = t.samples if cfg.attention == "hard" else 1
        index = torch.tensor(batch).repeat_interleave(n)  # (B n,): an image's samples adjacent
        tokens = self.tokens[index].to(device)  # (B n, T+1)
        getattr(model, "module", model).tau = self.temperature()
        out = model(self.images[index].to(device), tokens)
        loss, stats = caption_loss(
            out, tokens[:, 1:], PAD, penalty=t.penalty if cfg.attention == "soft" else 0.0,
            reinforce=t.reinforce, entropy=t.entropy, baseline=self.baseline or 0.0,
            kind=t.baseline, samples=n,
        )  # fmt: skip
        return Loss(loss, 1, {f"train_{k}": v for k, v in stats.items()})

    def temperature(self) -> float:
        """The Gumbel-softmax temperature now: ``max(tau_min, tau_start exp(-decay u))`` after
        ``u`` updates (Jang et al. 2017 anneal exponentially)."""
        t = self.config.train
        return max(t.tau_min, t.tau_start * math.exp(-t.tau_decay * self.updates))

    def after_update(self, stats: dict[str, float]) -> None:
        """The moving-average baseline ``b <- decay * b + (1 - decay) * r`` (Xu et al. §4.1),
        started at the first reward; updates without sampled captions leave it alone."""
        self.updates += 1
        if "train_reward" not in stats:
            return
        reward, decay = stats["train_reward"], self.config.train.baseline_decay
        previous = reward if self.baseline is None else self.baseline
        self.baseline = decay * previous + (1 - decay) * reward

    def state_dict(self) -> dict:
        return {"baseline": self.baseline, "updates": self.updates}

    def load_state_dict(self, state: dict) -> None:
        self.baseline = state.get("baseline")
        self.updates = state.get("updates", 0)

    @torch.no_grad()
    def validate(self, model) -> dict[str, float]:
        """Greedy captions of the validation scenes scored against their truth (BLEU, exact
        match, attention correctness), and ``valid_select``: exact match, then BLEU."""
        cfg = self.config
        captions = caption_scenes(model, self.vocab, self.valid, cfg.train.max_len)
        scores = score_captions(captions, self.valid, cfg.model.grid)
        row = {f"valid_{k}": float(v) for k, v in scores.items() if k != "bleu_signature"}
        row["valid_select"] = select_score(scores["exact_match"], scores["bleu"], len(self.valid))
        return row

    def finish(self, run: RunDir, model, result: TrainResult) -> None:
        """Add the best epoch's row and the training time to ``metrics.json``."""
        metrics = run.read_metrics()
        metrics.update(best=result.best, seconds=result.seconds)
        run.write_metrics(metrics)

    def summary(self, result: TrainResult) -> str:
        b = result.best
        return (
            f"{result.run_dir}: best step {b['step']} (epoch {b['epoch']}), valid BLEU "
            f"{b['valid_bleu']:.2f}, exact match {b['valid_exact_match']:.3f}, pointing "
            f"{b['valid_pointing']:.3f} ({result.seconds:.0f} s)"
        )


def select_score(exact_match: float, bleu: float, n: int) -> float:
    """Exact match, ties broken by BLEU: ``exact + bleu / (100 (n + 1))``. Exact match moves in
    steps of ``1 / n`` and BLEU (0 to 100) adds less than ``1 / (n + 1)``, so the order is the
    lexicographic order of ``(exact_match, bleu)``."""
    return exact_match + bleu / (100.0 * (n + 1))


def _world() -> int:
    """Processes training together (torchrun), so that an epoch is ``updates_per_epoch``
    updates however many share it."""
    dist = torch.distributed
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def train(
    cfg: CaptioningConfig, run_dir: str | Path, *, resume: Resume = False, progress: bool = False
) -> TrainResult:
    """Train ``cfg`` into ``run_dir`` (created); ``resume``: see
    :class:`~attnkit.engine.trainer.Trainer`."""
    return fit(CaptioningTask(cfg), run_dir, resume=resume, progress=progress)
