"""How well a guided head agrees with its own labels on training pairs it was trained on: a
diagnostic that separates "the head did not learn the labels" from "what it learned does not
carry over to the gold's text" (docs/alignment.md).

    ATTNKIT_DATA_DIR=../shared/data python benchmarks/guided_agreement.py \
        --config configs/rwth-transformer-de-en.yaml --labels runs/rwth-eflomal-train.align \
        --run runs/rwth-de-en-guided --layer 1 --head 0

``--labels`` are the guidance labels (0-based Pharaoh, one line per cleaned training pair, as
``benchmarks/eflomal_aer.py --write-train`` writes them); each of their links counts as sure.
Scored on the first ``--n`` training pairs of each corpus the config joins with ``+``, read
one way (each target word's argmax) and both ways (grow-diag of row and column argmaxes).
"""

from __future__ import annotations

import argparse

from attnkit.apps.translation.align.extract import extract_links
from attnkit.apps.translation.align.guided import tokenized
from attnkit.apps.translation.config import load_experiment
from attnkit.apps.translation.data import clean_corpus
from attnkit.apps.translation.prepare import load_configured_corpus
from attnkit.interpret.alignments import read_pharaoh
from attnkit.metrics.aer import alignment_error_rate


def corpus_starts(config: str) -> dict[str, int]:
    """The first training pair of each joined corpus (``a+b``: a's pairs, then b's)."""
    from dataclasses import replace

    data = load_experiment(config, []).data
    starts, at = {}, 0
    for name in data.corpus.split("+"):
        starts[name] = at
        at += len(clean_corpus(load_configured_corpus(replace(data, corpus=name))).train)
    return starts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--labels", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--layer", default="auto")
    parser.add_argument("--head", type=int, default=0)
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args(argv)
    data = load_experiment(args.config, []).data
    train = clean_corpus(load_configured_corpus(data)).train
    labels = read_pharaoh(args.labels)
    if len(labels) != len(train):
        raise SystemExit(f"{args.labels}: {len(labels)} lines for {len(train)} training pairs")
    layer = args.layer if args.layer in ("mean", "auto") else int(args.layer)
    for name, start in corpus_starts(args.config).items():
        rows = range(start, min(start + args.n, len(train)))
        pairs = [(tokenized(train[i].src), tokenized(train[i].tgt)) for i in rows]
        gold = [labels[i] for i in rows]
        for both_ways in (False, True):
            links = extract_links(
                args.run, pairs, layer=layer, head=args.head, detok=True, both_ways=both_ways
            )
            s = alignment_error_rate(gold, links)
            way = "both ways" if both_ways else "one way"
            print(f"{name} pairs {start + 1}-{rows[-1] + 1}, {way}: AER {100 * s.aer:.1f}")


if __name__ == "__main__":
    main()
