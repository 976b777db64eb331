"""The statistical peer: eflomal (Östling & Tiedemann 2016, a Bayesian IBM-model aligner) trained
on the parallel text a neural run sees, scored on the same gold as attention.

    pip install eflomal
    python benchmarks/eflomal_aer.py --gold generated --config CONFIG.yaml
    ATTNKIT_DATA_DIR=../shared/data python benchmarks/eflomal_aer.py --gold rwth \\
        --config configs/tatoeba-transformer.yaml configs/multi30k-transformer-cpu.yaml
    python benchmarks/eflomal_aer.py --config CONFIG.yaml --write-train links.align

The training text is the cleaned training split of each config's corpus, its pairs joined into
longer examples where the config sets ``data.concat``
(:func:`attnkit.apps.translation.prepare.cleaned_corpus`: what ``attnkit train CONFIG`` trains
on, pair for pair and in order). ``--write-train`` only aligns it and writes the symmetrised
links (grow-diag-final-and, 0-based Pharaoh), one line per training pair: the labels for
``train.guided_alignment.file``; ``--limit N`` aligns only the first N pairs (a quick check; a
file too short for the training pairs is refused by guided training).

eflomal aligns both directions (its forward and reverse links); they are combined by the same
symmetrisations as attention (:mod:`attnkit.interpret.alignments`). Two protocols, stated in
the output:

- ``with test``: the gold sentences are appended to the training text and aligned with it (how
  statistical aligners are usually run);
- ``without test``: eflomal aligns the training text alone, priors are computed from those
  links (``eflomal.calculate_priors``, as ``eflomal-makepriors``), and the gold sentences are
  aligned on their own with those priors: the test sentences were never in its training text.

Words: the generated corpus's own tokens; for RWTH, running text is split into words and
punctuation (:func:`words`, Europarl-style, as the gold), and both sides are lowercased, with the
gold's old spelling "daß" read as "dass" (Tatoeba and Multi30k use the new one). eflomal's
sampler is random: ``--repeats`` runs give the median and range. AER on the first ``--dev``
sentences and on the rest, as ``shift_att.py``, and the rest's AER by English length in words
(bins 1-10, 11-20, 21-30, 31-40, 41+, each pooling its sentences' links:
:func:`attnkit.metrics.aer.aer_by_length`; ``by_length`` in the JSON, one list per run, and the
medians printed). Writes ``benchmarks/results/eflomal-{gold}.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from attnkit.apps.translation.align.guided import tokenized
from attnkit.interpret.alignments import read_pharaoh, symmetrise, write_pharaoh
from attnkit.metrics.aer import aer_by_length, alignment_error_rate

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ("forward", "reverse", "intersection", "grow-diag", "grow-diag-final-and", "union")


def words(text: str) -> str:
    """Running text as lowercased words and punctuation marks, space-separated: the tokens of
    :func:`attnkit.apps.translation.align.guided.split_words`, so links index the same words."""
    return tokenized(text).lower().replace("daß", "dass")


def eflomal_links(src: list[str], tgt: list[str], priors: Path | None = None):
    """eflomal's forward and reverse links (lists of link sets) for the given lines."""
    import eflomal

    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        handle = priors.open(encoding="utf-8") if priors else None
        eflomal.Aligner().align(src, tgt, str(fwd), str(rev), priors_input=handle)
        if handle:
            handle.close()
        return [a.sure for a in read_pharaoh(fwd)], [a.sure for a in read_pharaoh(rev)]


def write_priors(src: list[str], tgt: list[str], fwd, rev, path: Path) -> Path:
    """eflomal priors from the training text and its links (what ``eflomal-makepriors`` does)."""
    import eflomal

    lines = [[" ".join(f"{i}-{j}" for i, j in sorted(a)) for a in side] for side in (fwd, rev)]
    priors = eflomal.calculate_priors(src, tgt, *lines)
    with path.open("w", encoding="utf-8") as f:
        eflomal.write_priors(f, *priors)
    return path


def training_text(args) -> tuple[list[str], list[str]]:
    """The lowercased (source, target) words of the training pairs the configs' runs see."""
    from attnkit.apps.translation.config import load_experiment
    from attnkit.apps.translation.prepare import cleaned_corpus

    src, tgt = [], []
    for config in args.config:
        data = load_experiment(config, args.set).data
        train = cleaned_corpus(data).train  # data.concat's joined examples, when set
        src += [words(p.src) for p in train]
        tgt += [words(p.tgt) for p in train]
    return src, tgt


def gold_corpus(args):
    if args.gold == "rwth":
        from attnkit.apps.translation.align.aer import default_rwth_tarball
        from attnkit.metrics.aer import read_rwth_deen

        corpus = read_rwth_deen(default_rwth_tarball())
        return [s.lower().replace("daß", "dass") for s in corpus.source], corpus
    from attnkit.apps.translation.align.extract import generated_gold
    from attnkit.apps.translation.config import load_experiment

    data = load_experiment(args.config[0], args.set).data
    corpus = generated_gold(
        data.generated_sizes, data.generated_seed, reverse=data.src_lang == "de"
    )
    return [s.lower() for s in corpus.source], corpus


def write_training_links(src, tgt, path: Path, method: str = "grow-diag-final-and") -> Path:
    """eflomal's symmetrised links of the training text, 0-based Pharaoh: the labels of
    alignment-guided training (``train.guided_alignment.file``)."""
    fwd, rev = eflomal_links(src, tgt)
    links = [symmetrise(f, r, method) for f, r in zip(fwd, rev, strict=True)]
    return write_pharaoh(path, links)


def english_lengths(args, corpus) -> list[int]:
    """Words of each gold pair's English side: RWTH's target; the generated gold's source
    unless the first config translates de->en."""
    if args.gold == "rwth":
        english = corpus.target
    else:
        from attnkit.apps.translation.config import load_experiment

        german_first = load_experiment(args.config[0], args.set).data.src_lang == "de"
        english = corpus.target if german_first else corpus.source
    return [len(text.split()) for text in english]


def score(gold, fwd, rev, dev: int, lengths: list[int]) -> dict:
    """Per method: AER (percent) on the dev and the reported sentences, and the reported
    ones' bins by English length (:meth:`attnkit.metrics.aer.LengthBin.percent`)."""
    out = {}
    for method in METHODS:
        if method in ("forward", "reverse"):
            links = fwd if method == "forward" else rev
        else:
            links = [symmetrise(f, r, method) for f, r in zip(fwd, rev, strict=True)]
        out[method] = {
            part: 100 * alignment_error_rate(gold[sl], links[sl]).aer
            for part, sl in (("dev", slice(0, dev)), ("report", slice(dev, None)))
        }
        bins = aer_by_length(gold[dev:], links[dev:], lengths[dev:])
        out[method]["by_length"] = [b.percent() for b in bins]
    return out


def median_bins(runs: list[list[dict]]) -> list[dict]:
    """Bin by bin, the median AER of the runs (None for an empty bin)."""
    out = []
    for bins in zip(*runs, strict=True):
        values = [b["aer"] for b in bins if b["aer"] is not None]
        median = statistics.median(values) if values else None
        out.append(dict(bin=bins[0]["bin"], sentences=bins[0]["sentences"], aer=median))
    return out


def print_by_length(table: list[dict]) -> None:
    """The reported sentences' median AER per English-length bin, every protocol and method."""
    bins = table[0]["by_length"]
    print("\nreported AER by English length in words, median of the runs (sentences per bin):\n")
    print(
        "| protocol | method | " + " | ".join(f"{b['bin']} ({b['sentences']})" for b in bins) + " |"
    )
    print("|---|---|" + "---:|" * len(bins))
    for r in table:
        cells = ["-" if b["aer"] is None else f"{b['aer']:.1f}" for b in r["by_length"]]
        print(f"| {r['protocol']} | {r['method']} | " + " | ".join(cells) + " |")


def run_protocols(args, src, tgt, test_src, test_tgt, corpus, lengths) -> dict:
    """``--repeats`` runs of both protocols, each run's :func:`score`."""
    runs = {"with test": [], "without test": []}
    for _ in range(args.repeats):
        fwd, rev = eflomal_links(src + test_src, tgt + test_tgt)
        fwd, rev = fwd[len(src) :], rev[len(src) :]
        runs["with test"].append(score(corpus.gold, fwd, rev, args.dev, lengths))
        fwd, rev = eflomal_links(src, tgt)
        with tempfile.TemporaryDirectory() as tmp:
            priors = write_priors(src, tgt, fwd, rev, Path(tmp) / "priors")
            fwd, rev = eflomal_links(test_src, test_tgt, priors)
        runs["without test"].append(score(corpus.gold, fwd, rev, args.dev, lengths))
    return runs


def report(args, runs: dict, pairs: int, n: int, seconds: float) -> None:
    """Print the tables and write ``--json``."""
    print(f"$ python {' '.join(sys.argv)}\n")
    print(f"training text: {pairs} pairs; gold: {args.gold}, {n} sentences")
    print(f"choosing on 1-{args.dev}, reporting on {args.dev + 1}-{n}; {args.repeats} runs each")
    print(f"{seconds:.0f} s\n\n| protocol | method | dev AER | reported AER (median, range) |")
    print("|---|---|---:|---:|")
    table = []
    for protocol, scores in runs.items():
        for method in METHODS:
            dev = statistics.median(s[method]["dev"] for s in scores)
            rep = [s[method]["report"] for s in scores]
            by_length = [s[method]["by_length"] for s in scores]
            row = dict(protocol=protocol, method=method, dev=dev, report=rep)
            table.append(row | dict(by_length=median_bins(by_length), by_length_runs=by_length))
            spread = f"{min(rep):.1f}-{max(rep):.1f}"
            print(
                f"| {protocol} | {method} | {dev:.1f} | {statistics.median(rep):.1f} ({spread}) |"
            )
    print_by_length(table)
    record = dict(command=sys.argv, pairs=pairs, sentences=n, dev=args.dev, rows=table)
    out = args.json or RESULTS / f"eflomal-{args.gold}.json"
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", choices=("generated", "rwth"), default="generated")
    parser.add_argument(
        "--config", nargs="+", required=True, help="translation configs: their training text"
    )
    parser.add_argument("--set", action="append", default=[], help="config overrides, KEY=VALUE")
    parser.add_argument("--write-train", type=Path, help="only write the training text's links")
    parser.add_argument("--limit", type=int, help="--write-train: only the first N pairs")
    parser.add_argument("--dev", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="default benchmarks/results/eflomal-GOLD.json")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    src, tgt = training_text(args)
    if args.write_train:
        src, tgt = src[: args.limit], tgt[: args.limit]
        print(write_training_links(src, tgt, args.write_train))
        return
    test_src, corpus = gold_corpus(args)
    test_tgt = [s.lower() for s in corpus.target]
    lengths = english_lengths(args, corpus)
    runs = run_protocols(args, src, tgt, test_src, test_tgt, corpus, lengths)
    report(args, runs, len(src), len(corpus.gold), time.perf_counter() - start)


if __name__ == "__main__":
    main()
