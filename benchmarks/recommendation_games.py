"""Next-item recommendation on SASRec's Amazon Games data (issue 40): the baselines and trained
runs in one harness, on both protocols.

- **Sampled** (Kang & McAuley 2018, §IV-C): each user's test target ranked among 100 items
  drawn by the authors' rule (``data.rule``, seeded by ``data.seed`` and the user), on
  ``data.eval_users`` users (10,000, seeded).
- **Full** (Krichene & Rendle 2020): the target ranked among every item, the user's history
  left out.

HR@10, NDCG@10 and MRR for popularity and item-to-item transitions (fitted on the training
sequences) and for every run directory given (SASRec or the GRU, its best epoch); runs of one
model (``model.kind`` and ``train.loss``) trained with different seeds are also summarised as
the mean, smallest and largest over the seeds. ::

    OMP_NUM_THREADS=2 python benchmarks/recommendation_games.py --config CONFIG --runs RUN...
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from attnkit.apps.recommendation.baselines import CoOccurrence, Popularity
from attnkit.apps.recommendation.config import load_config
from attnkit.apps.recommendation.data import evaluation_users
from attnkit.apps.recommendation.run import RecommendationRun, protocol_scores
from attnkit.apps.recommendation.training import load_split


def trained(path: Path):
    """The best epoch's model of a recommendation run."""
    return RecommendationRun.load(path).model


def model_name(path: Path) -> str:
    """``sasrec``, ``sasrec-ce`` (cross-entropy over every item), ``gru`` or ``gru-ce``."""
    cfg = RecommendationRun.load(path).config
    return cfg.model.kind + ("-ce" if cfg.train.loss == "ce" else "")


def over_seeds(table: dict, runs: list[Path]) -> dict:
    """Each model's figures over its runs: mean, smallest and largest, per protocol."""
    groups: dict[str, list[dict]] = {}
    for path in runs:
        groups.setdefault(model_name(path), []).append(table[str(path)])
    out = {}
    for name, rows in groups.items():
        out[name] = {"runs": len(rows)}
        for protocol in ("sampled", "full"):
            for key in rows[0][protocol]:
                values = np.array([r[protocol][key] for r in rows])
                out[name][f"{protocol}_{key}"] = [values.mean(), values.min(), values.max()]
    return out


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
        **{str(p): trained(p) for p in args.runs},
    }
    table = {"users": len(users), "rule": cfg.data.rule, "negatives": cfg.data.negatives}
    for name, model in models.items():
        start = time.perf_counter()
        table[name] = protocol_scores(model, cfg, split, users, "test")
        table[name]["seconds"] = time.perf_counter() - start
        print(name, json.dumps(table[name]), flush=True)
    table["over_seeds"] = over_seeds(table, args.runs)
    for name, row in table["over_seeds"].items():
        print(name, json.dumps({k: np.round(v, 4).tolist() for k, v in row.items()}), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1), encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
