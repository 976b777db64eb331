"""A trained recommendation run as a Python object (``attnkit.load_run``): the model of
``model.safetensors`` with its config, which recommends the next items after a history, shows
which past items the prediction attended to, and scores a split on both protocols::

    run = attnkit.load_run("runs/sasrec-games")
    run.recommend([6393, 13504, 14087], k=10)    # [(item, score), ...], history left out
    run.attention([6393, 13504, 14087])          # per block (H, L, L) over the history
    run.evaluate("test")                         # sampled and full HR@10, NDCG@10, MRR
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from attnkit.apps import require_kind
from attnkit.apps.recommendation.batches import history_tensor, ranks
from attnkit.apps.recommendation.config import RecommendationConfig, load_config
from attnkit.apps.recommendation.data import Split, candidates, evaluation_users, exclusions
from attnkit.apps.recommendation.training import build_model, load_split
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir
from attnkit.metrics.ranking import ranking_scores

__all__ = ["RecommendationRun"]


@dataclass
class RecommendationRun:
    """``attnkit.load_run`` of a recommendation run."""

    path: Path
    config: RecommendationConfig
    model: torch.nn.Module
    n_items: int
    task: str = "recommendation"

    @classmethod
    def load(cls, path: str | Path) -> RecommendationRun:
        """The run at ``path`` (its best epoch's model); a run of another kind is refused."""
        require_kind(path, "recommendation")
        run = RunDir(path)
        cfg = load_config(run.existing_config())
        n_items = json.loads((run.root / "items.json").read_text(encoding="utf-8"))["n_items"]
        model = build_model(cfg, n_items)
        load_model(model, run.model)
        return cls(Path(path), cfg, model.eval(), n_items)

    def _device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _checked(self, history: Sequence[int]) -> list[int]:
        items = [int(i) for i in history]
        if not items:
            raise ValueError("the history is empty: give at least one item id")
        bad = [i for i in items if not 1 <= i <= self.n_items]
        if bad:
            raise ValueError(f"item {bad[0]} is not one of this run's items 1..{self.n_items}")
        return items

    @torch.no_grad()
    def recommend(self, history: Sequence[int], k: int = 10) -> list[tuple[int, float]]:
        """The ``k`` best next items after ``history`` (oldest first) with their scores, the
        history's own items left out."""
        items = self._checked(history)
        seq = history_tensor([items], self.config.model.max_len).to(self._device())
        scores = self.model.predict(seq)[0].cpu()
        scores = scores.float().clone()  # (V + 1,)
        scores[[0, *items]] = float("-inf")
        top = torch.topk(scores, min(k, self.n_items - len(set(items))))
        return [(int(i), float(s)) for i, s in zip(top.indices, top.values, strict=True)]

    @torch.no_grad()
    def attention(self, history: Sequence[int]) -> list[np.ndarray]:
        """Per block, the weights ``(H, L, L)`` over the last ``max_len`` items of ``history``
        (row ``i``: what position ``i``, which predicts the item after it, attended to); the
        last row is the prediction's. SASRec only (the GRU has no attention)."""
        if not hasattr(self.model, "encode"):
            raise ValueError("a GRU run has no attention: train model.kind: sasrec")
        items = self._checked(history)[-self.config.model.max_len :]
        seq = history_tensor([items], len(items)).to(self._device())
        found = self.model.encode(seq, need_weights=True)
        return [w[0].float().cpu().numpy() for w in found.attentions]  # (H, L, L) each

    def evaluate(self, split: str = "test", data_dir: str | Path | None = None) -> dict:
        """HR@10, NDCG@10 and MRR of ``split``'s targets ("valid" or "test") on
        ``data.eval_users`` users, sampled and full; written to ``RUN/evaluation-SPLIT.json``."""
        if split not in ("valid", "test"):
            raise ValueError(f"recommendation has splits valid and test, not {split!r}")
        cfg = self.config
        if data_dir is not None:
            cfg = replace(cfg, data=replace(cfg.data, data_dir=Path(data_dir)))
        data = load_split(cfg)
        users = evaluation_users(data, cfg.data.eval_users, cfg.data.seed)
        scores = protocol_scores(self.model, cfg, data, users, split)
        record = {"split": split, "n": len(users), "negatives": cfg.data.negatives,
                  "rule": cfg.data.rule, **scores}  # fmt: skip
        self.evaluation_file(split).write_text(json.dumps(record, indent=1), encoding="utf-8")
        return record

    def evaluation_file(self, split: str) -> Path:
        return self.path / f"evaluation-{split}.json"


def protocol_scores(model, cfg: RecommendationConfig, data: Split, users, target: str) -> dict:
    """``{"sampled": {...}, "full": {...}}``: HR@10, NDCG@10 and MRR of ``users``' targets."""
    d = cfg.data
    histories = [data.history(u, target) for u in users]
    targets = [data.target(u, target) for u in users]
    sampled = [candidates(data, u, target, d.seed, d.negatives, d.rule).tolist() for u in users]
    out = {}
    for name, cands, exclude in (
        ("sampled", sampled, None),
        ("full", None, [exclusions(data, u, target) for u in users]),
    ):
        found = ranks(model, histories, cands, targets, cfg.model.max_len, exclude=exclude)
        s = ranking_scores(found, 10)
        out[name] = {"hr10": s.hit_rate, "ndcg10": s.ndcg, "mrr": s.mrr}
    return out
