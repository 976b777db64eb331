"""Captioning as an engine task: Show, Attend and Tell (Xu et al. 2015) on generated scenes.

An epoch is ``train.updates_per_epoch`` batches of scenes drawn with replacement (a pure
function of the seed and the epoch, so a resumed run continues bit for bit); each batch's loss
is :func:`~attnkit.apps.captioning.losses.caption_loss` (teacher-forced cross-entropy, the
doubly stochastic penalty of eq. (14) for soft attention, REINFORCE and the entropy bonus of
§4.1 for hard attention). The REINFORCE moving-average baseline is the task's state: updated
after every optimiser step and checkpointed with the run. Validation decodes the validation
scenes greedily; the best epoch is the one with the highest ``valid_select``, exact match
first and BLEU to break ties. ::

    from attnkit.engine.trainer import fit
    result = fit(CaptioningTask(load_experiment("configs/scenes-soft-small.yaml")), "runs/small")
"""

from __future__ import annotations

import math

import torch

from attnkit.apps.captioning.config import CaptioningConfig
from attnkit.apps.captioning.data import epoch_batches, scenes_for, tensors
from attnkit.apps.captioning.inference import build, caption_scenes
from attnkit.apps.captioning.losses import caption_loss
from attnkit.apps.captioning.scenes import PAD, Vocabulary
from attnkit.apps.captioning.views import score_captions
from attnkit.engine.results import TrainResult
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task


class CaptioningTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a captioning experiment."""

    monitor = "valid_select"
    mode = "max"

    def __init__(self, cfg: CaptioningConfig) -> None:
        self.config = cfg
        self.vocab = Vocabulary.for_scenes()
        self.images = self.tokens = None  # the training split, (N, 3, S, S) and (N, T+1)
        self.valid = []
        # b of Xu et al. §4.1: the moving average of log p(y|s,a); None until the first reward
        self.baseline: float | None = None
        self.updates = 0  # optimiser steps so far: the Gumbel temperature's clock
        self.net = None  # the model build_model made (unwrapped, whatever wraps it to train)

    def prepare(self, run: RunDir | None, *, resume: bool) -> None:
        """Generate the training and validation scenes; save the vocabulary."""
        if run is not None and not resume:
            self.vocab.save(run.root / "vocab.json")
        self.images, self.tokens = tensors(scenes_for(self.config, "train"), self.vocab)
        self.valid = scenes_for(self.config, "valid")

    def build_model(self) -> torch.nn.Module:
        self.net = build(self.config, self.vocab)  # kept: its temperature anneals as it trains
        return self.net

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        t = self.config.train
        return epoch_batches(
            len(self.images),
            seed=t.seed,
            epoch=epoch,
            batch_size=t.batch_size,
            n_batches=t.updates_per_epoch * t.update_freq * _world(),
        )

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
        self.net.tau = self.temperature()
        out = model(self.images[index].to(device), tokens)
        loss, stats = caption_loss(
            out,
            tokens[:, 1:],
            PAD,
            penalty=t.penalty if cfg.attention == "soft" else 0.0,
            reinforce=t.reinforce,
            entropy=t.entropy,
            baseline=self.baseline or 0.0,
            kind=t.baseline,
            samples=n,
        )
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

    def finish(self, run: RunDir | None, model, result: TrainResult) -> dict:
        """The best epoch's validation scores (the weights the engine kept) and its update."""
        b = result.best
        keys = ("valid_bleu", "valid_exact_match", "valid_pointing")
        return {"best_step": b["step"], **{k: b[k] for k in keys if k in b}}


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
