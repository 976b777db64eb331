"""Next-item recommendation on SASRec's Amazon Games data (issue 40): the baselines and trained
runs in one harness, on both protocols.

- **Sampled** (Kang & McAuley 2018, §IV-C): each user's test target ranked among 100 items
  drawn by the authors' rule (``data.rule``, seeded by ``data.seed`` and the user), on
  ``data.eval_users`` users (10,000, seeded).
- **Full** (Krichene & Rendle 2020): the target ranked among every item, the user's history
  left out.

HR@10, NDCG@10 and MRR for popularity and item-to-item transitions (fitted on the training
sequences) and for every run directory given (SASRec or the GRU, its best epoch). ::

    OMP_NUM_THREADS=2 python benchmarks/recommendation_games.py --config CONFIG --runs RUN...
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from attnkit.apps.recommendation.baselines import CoOccurrence, Popularity
from attnkit.apps.recommendation.batches import ranks
from attnkit.apps.recommendation.config import RecommendationConfig, load_config
from attnkit.apps.recommendation.data import candidates, evaluation_users, exclusions
from attnkit.apps.recommendation.training import build_model, load_split
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir
from attnkit.metrics.ranking import ranking_scores


def scores(model, cfg: RecommendationConfig, split, users, target: str = "test") -> dict:
    """Both protocols' scores of ``model`` on ``users``' ``target``."""
    d = cfg.data
    histories = [split.history(u, target) for u in users]
    targets = [split.target(u, target) for u in users]
    out = {}
    for protocol in ("sampled", "full"):
        start = time.perf_counter()
        found = ranks(
            model, histories,
            [candidates(split, u, target, d.seed, d.negatives, d.rule).tolist() for u in users]
            if protocol == "sampled" else None,
            targets, cfg.model.max_len,
            exclude=[exclusions(split, u, target) for u in users] if protocol == "full" else None,
        )  # fmt: skip
        result = ranking_scores(found, 10)
        out[protocol] = {
            "hr10": result.hit_rate, "ndcg10": result.ndcg, "mrr": result.mrr,
            "seconds": time.perf_counter() - start,
        }  # fmt: skip
    return out


def trained(path: Path, n_items: int):
    run = RunDir(path)
    cfg = load_config(run.existing_config())
    model = build_model(cfg, n_items)
    load_model(model, run.model)
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True, help="a task: recommendation YAML")
    parser.add_argument("--runs", type=Path, nargs="*", default=[])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/sasrec-games.json"))
    args = parser.parse_args()
    cfg = load_config(args.config)
    split = load_split(cfg)
    users = evaluation_users(split, cfg.data.eval_users, cfg.data.seed)
    sequences = list(split.train.values())
    models = {
        "popularity": Popularity().fit(sequences, split.n_items),
        "transitions": CoOccurrence().fit(sequences, split.n_items),
        **{str(p): trained(p, split.n_items) for p in args.runs},
    }
    table = {"users": len(users), "rule": cfg.data.rule, "negatives": cfg.data.negatives}
    for name, model in models.items():
        table[name] = scores(model, cfg, split, users)
        print(name, json.dumps(table[name]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1), encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
