"""One-sentence extractive baselines on SciTLDR-A (issue 41): Lead-1 and the oracle sentence
(:mod:`attnkit.apps.summarization.extractive`), the floor and the ceiling for the
pointer-generator's TLDRs.

Per split and method: ROUGE-1/2/L F1 in points (SciTLDR's multi-reference rule: the reference
with the best ROUGE-1, :func:`attnkit.metrics.summary.rouge`), mean words (split at spaces),
the mean share of repeated trigrams and of summary tokens found in the abstract, and of novel
bigrams (tokens of :func:`attnkit.apps.summarization.data.tokenize`). The references' own
lengths and shares come beside them (the first target, the author's TLDR where there is one;
and every target). The oracle reads the references: an upper bound, not a summarizer. ::

    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/summarization_extractive.py \\
        --split valid test --out benchmarks/results/scitldr-extractive.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from attnkit.apps.summarization.data import Paper, load_split, tokenize
from attnkit.apps.summarization.extractive import METHODS
from attnkit.metrics.summary import (
    copied_share,
    corpus_rouge,
    novel_ngram_share,
    repeated_trigram_share,
)


def shape(texts: list[str], sources: list[str]) -> dict[str, float]:
    """Mean words, repeated-trigram, copied and novel-bigram shares of ``texts``."""
    pairs = [(tokenize(t), tokenize(s)) for t, s in zip(texts, sources, strict=True)]
    return {
        "words": float(np.mean([len(t.split()) for t in texts])),
        "repeated_trigrams": float(np.mean([repeated_trigram_share(t) for t, _ in pairs])),
        "copied_words": float(np.mean([copied_share(t, s) for t, s in pairs])),
        "novel_bigrams": float(np.mean([novel_ngram_share(t, s, 2) for t, s in pairs])),
    }


def score_split(papers: list[Paper]) -> dict:
    """Every method's scores on ``papers``, and the references' shape."""
    abstracts = [p.abstract for p in papers]
    table: dict = {
        "papers": len(papers),
        "targets": sum(len(p.targets) for p in papers),
        "abstract_words": float(np.mean([len(a.split()) for a in abstracts])),
    }
    for name, method in METHODS.items():
        start = time.perf_counter()
        summaries = [method(p) for p in papers]
        table[name] = corpus_rouge(summaries, [p.targets for p in papers])
        table[name].update(shape(summaries, abstracts))
        table[name]["seconds"] = round(time.perf_counter() - start, 2)
    table["reference_first"] = shape([p.targets[0] for p in papers], abstracts)
    every = [(t, p.abstract) for p in papers for t in p.targets]
    table["reference_all"] = shape([t for t, _ in every], [a for _, a in every])
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", nargs="+", choices=("valid", "test"), default=["valid", "test"])
    parser.add_argument("--data-dir", type=Path, default=None, help="the shared data folder")
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/scitldr-extractive.json")
    )
    args = parser.parse_args()
    result: dict = {
        "rouge": "rouge_score, use_stemmer=True, F1 in points; SciTLDR's multi-reference rule "
        "(the reference with the best ROUGE-1, allenai/scitldr scripts/cal-rouge.py)",
    }
    for split in args.split:
        result[split] = score_split(load_split(split, args.data_dir))
        for name in METHODS:
            print(split, name, json.dumps(result[split][name]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
