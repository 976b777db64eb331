"""Summarization on SciTLDR-A (issue 41): the trained runs beside Lead-1 and the oracle, on
the test split, each model's figures a mean over its seeds with the spread (the smallest and
largest seed).

A run's model is named by its mechanisms (``model.copy``, ``model.coverage``): ``seq2seq``
(attention alone), ``pointer`` (copy), ``pointer+coverage``. Each run is scored by
:meth:`SummarizationRun.evaluate` (beam ``train.beam``) unless ``RUN/evaluation-test.json``
exists; Lead-1 and the oracle come from ``benchmarks/summarization_extractive.py``'s JSON. ::

    OMP_NUM_THREADS=2 python benchmarks/summarization_scitldr.py --runs runs/sum/*-s[012]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from attnkit.apps.summarization.run import SummarizationRun

KEYS = ("rouge1", "rouge2", "rougeL", "repeated_trigrams", "copied_words", "novel_bigrams",
        "words", "p_gen")  # fmt: skip


def model_name(run: SummarizationRun) -> str:
    m = run.config.model
    return "pointer+coverage" if m.copy and m.coverage else "pointer" if m.copy else "seq2seq"


def scored(path: Path, split: str) -> tuple[str, dict]:
    run = SummarizationRun.load(path)
    done = path / f"evaluation-{split}.json"
    record = json.loads(done.read_text()) if done.exists() else run.evaluate(split)
    return model_name(run), {k: record[k] for k in KEYS} | {"seed": run.config.train.seed}


def summary(rows: list[dict]) -> dict:
    """Mean, smallest and largest of each figure over the seeds."""
    out = {"seeds": [r["seed"] for r in rows]}
    for k in KEYS:
        values = np.array([r[k] for r in rows], dtype=float)
        out[k] = {"mean": values.mean(), "min": values.min(), "max": values.max()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, nargs="+", required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument(
        "--extractive", type=Path, default=Path("benchmarks/results/scitldr-extractive.json")
    )
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/scitldr-summarization.json")
    )
    args = parser.parse_args()  # fmt: skip
    by_model = defaultdict(list)
    for path in args.runs:
        name, figures = scored(path, args.split)
        by_model[name].append(figures | {"run": str(path)})
        print(name, path, json.dumps({k: round(v, 4) for k, v in figures.items()}), flush=True)
    table = {name: summary(rows) | {"runs": rows} for name, rows in by_model.items()}
    extractive = json.loads(args.extractive.read_text()).get(args.split, {})
    table |= {name: extractive[name] for name in ("lead-1", "oracle") if name in extractive}
    for name, row in table.items():
        cells = [row[k]["mean"] if isinstance(row[k], dict) else row[k] for k in KEYS[:5]]
        print(f"| {name} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"split": args.split, **table}, indent=1), encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
