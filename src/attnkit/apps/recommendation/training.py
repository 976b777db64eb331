"""Sequential recommendation as an engine task: SASRec (Kang & McAuley 2018) or the GRU
baseline trained with one sampled negative per position (§III-E), validated by the sampled
protocol on the validation targets (§IV-C: the target among ``data.negatives`` items; HR@10
and NDCG@10, the best epoch the highest NDCG@10).

An epoch visits every user once in batches of ``train.batch_size`` users (the authors'
sampler draws users with replacement; here each once, in an order that is a pure function of
``(seed, epoch)``), and each user's negatives are drawn from a generator seeded by ``(seed,
epoch, user)``, so a resumed run continues exactly. ::

    from attnkit.apps.recommendation.config import load_config
    from attnkit.apps.recommendation.training import RecommendationTask
    from attnkit.engine.trainer import fit
    result = fit(RecommendationTask(load_config("configs/sasrec-games.yaml")), "runs/sasrec")
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import numpy as np
import torch

from attnkit.apps.recommendation.batches import ranks, training_example
from attnkit.apps.recommendation.config import RecommendationConfig
from attnkit.apps.recommendation.data import (
    Split,
    candidates,
    evaluation_users,
    games_path,
    read_interactions,
    split_last_two,
)
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task
from attnkit.errors import DataError
from attnkit.metrics.ranking import hit_rate_at_k, ndcg_at_k

log = logging.getLogger(__name__)


def build_model(cfg: RecommendationConfig, n_items: int) -> torch.nn.Module:
    """SASRec, or the GRU baseline with ``kind: gru``."""
    if cfg.model.kind == "gru":
        from attnkit.apps.recommendation.baselines import GRURec, GRURecConfig

        m = cfg.model
        return GRURec(GRURecConfig(m.d_model, m.gru_layers, m.dropout), n_items)
    from attnkit.apps.recommendation.model import SASRec

    return SASRec(cfg.model, n_items)


def load_split(cfg: RecommendationConfig) -> Split:
    """The interactions of ``data.path`` (default: Games in the shared data folder), split by
    the authors' rule; a file without a user to evaluate is a :class:`DataError`."""
    path = cfg.data.path if cfg.data.path is not None else games_path(cfg.data.data_dir)
    found = read_interactions(path)
    if cfg.data.limit is not None:
        kept = dict(sorted(found.sequences.items())[: cfg.data.limit])
        items = [i for seq in kept.values() for i in seq]
        found = replace(found, sequences=kept, n_users=max(kept), n_items=max(items),
                        lines=len(items))  # fmt: skip
    split = split_last_two(found)
    if not split.evaluated():
        raise DataError(f"{path}: no user has 3 or more items, so none can be evaluated")
    return split


def sampled_scores(model, cfg: RecommendationConfig, split: Split, target: str, users) -> dict:
    """HR@10 and NDCG@10 of ``users``' ``target`` ("valid" or "test") among the sampled
    candidates of ``data.negatives`` items (seeded by ``data.seed`` and the user)."""
    d = cfg.data
    found = ranks(
        model,
        [split.history(u, target) for u in users],
        [candidates(split, u, target, d.seed, d.negatives, d.rule).tolist() for u in users],
        [split.target(u, target) for u in users],
        cfg.model.max_len,
    )
    return {"hr10": hit_rate_at_k(found, 10), "ndcg10": ndcg_at_k(found, 10)}


class RecommendationTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a recommendation run."""

    monitor = "valid_ndcg10"
    mode = "max"

    def __init__(self, cfg: RecommendationConfig) -> None:
        self.config = cfg
        self.split: Split | None = None
        self.users: list[int] = []  # users with two or more training items (an example each)
        self.model_width = cfg.model.d_model

    def prepare(self, run: RunDir | None, *, resume: bool) -> None:
        """Read and split the interactions; the item count goes to ``RUN/items.json``."""
        self.split = load_split(self.config)
        if run is not None and not resume:
            counts = {"n_items": self.split.n_items, "n_users": self.split.n_users}
            (run.root / "items.json").write_text(json.dumps(counts), encoding="utf-8")
        self.users = sorted(u for u, items in self.split.train.items() if len(items) >= 2)
        self.valid_users = evaluation_users(
            self.split, self.config.data.valid_users, self.config.data.seed
        )
        log.info(
            "%d users (%d evaluated), %d items; %d training sequences",
            self.split.n_users, len(self.split.evaluated()), self.split.n_items, len(self.users),
        )  # fmt: skip

    def build_model(self) -> torch.nn.Module:
        return build_model(self.config, self.split.n_items)

    def epoch_batches(self, epoch: int) -> list[list[tuple[int, int]]]:
        """Every user with a next item to predict once, as ``(user, epoch)``."""
        t = self.config.train
        order = np.random.default_rng((t.seed, epoch)).permutation(len(self.users))
        users = [(self.users[i], epoch) for i in order]
        return [users[k : k + t.batch_size] for k in range(0, len(users), t.batch_size)]

    def units(self, items: list[tuple[int, int]]) -> int:
        return len(items)

    def collate(self, items: list[tuple[int, int]]) -> tuple[torch.Tensor, ...]:
        """``seq, pos, neg`` each ``(B, max_len)``."""
        rows = [
            training_example(
                self.split.train[u], self.split.n_items, self.config.model.max_len,
                np.random.default_rng((self.config.train.seed, epoch, u)),
            )
            for u, epoch in items
        ]  # fmt: skip
        return tuple(torch.tensor(list(part), dtype=torch.long) for part in zip(*rows, strict=True))

    def loss(self, model, batch) -> Loss:
        seq, pos, neg = batch if isinstance(batch, tuple) else self.collate(batch)
        device = next(model.parameters()).device
        value = model.loss(  # mean per position
            seq.to(device), pos.to(device), neg.to(device), self.config.train.loss
        )
        return Loss(value * seq.size(0), seq.size(0))

    def validate(self, model) -> dict[str, float]:
        """The sampled protocol on the validation targets of ``data.valid_users`` users."""
        model.eval()
        found = sampled_scores(model, self.config, self.split, "valid", self.valid_users)
        return {f"valid_{k}": v for k, v in found.items()}
