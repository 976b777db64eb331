"""Shift-Att and the decoder layer, chosen on development sentences of a gold set and reported
on the rest (Chen et al. 2020; Garg et al. 2019).

    python benchmarks/shift_att.py --gold generated --run EN_DE_RUN [--reverse-run DE_EN_RUN]
    ATTNKIT_DATA_DIR=../shared/data python benchmarks/shift_att.py --gold rwth \\
        --run DE_EN_RUN [--reverse-run EN_DE_RUN] [--dev 100]

For every decoder layer (and their mean) and with and without the shift, a run is
teacher-forced on the gold pairs and its links are scored: the argmax of each target word, of
each source word (the column's argmax), both combined by grow-diag, and, with a reverse run,
the same of the reverse run, every symmetrisation of the two runs' target argmaxes, and for
every pair of layers (no shift) the product of the two attentions (Liang et al. 2006,
:func:`attnkit.interpret.agreement.agreement_links`): AER on
the first ``--dev`` sentences (for choosing) and on the others (for reporting). The setting
with the lowest development AER is named, with its AER on the reported sentences. Every row
also has the AER of the reported sentences by English length in words (``by_length``: bins
1-10, 11-20, 21-30, 31-40, 41+, each pooling its sentences' links, with their counts;
:func:`attnkit.metrics.aer.aer_by_length`), printed for the diagonal and the chosen setting.
Gold sets:

- ``generated``: the test split of the run's own generated corpus (``data.generated_sizes``,
  ``data.generated_seed``) with the generator's gold links;
- ``rwth``: the 508 RWTH German-English sentences (Vilar, Popović & Ney 2006); the runs must
  translate de->en (forward) and en->de (reverse).

Both golds are tokenised; the models read them as running text (no space before , . ! ?: the
text they were trained on) unless ``--tokens``.

Writes ``--json`` (default ``benchmarks/results/shift-att-{gold}.json``) with every row.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import torch

from attnkit.apps.translation.align.aer import SYMMETRISATIONS, diagonal_links
from attnkit.apps.translation.align.extract import generated_gold, run_attention
from attnkit.interpret.agreement import agreement_links
from attnkit.interpret.alignments import argmax_links, flip, symmetrise
from attnkit.metrics.aer import aer_by_length, alignment_error_rate

RESULTS = Path(__file__).resolve().parent / "results"


def _gold(args, cfg):
    if args.gold == "rwth":
        from attnkit.apps.translation.align.aer import default_rwth_tarball
        from attnkit.metrics.aer import read_rwth_deen

        return read_rwth_deen(args.gold_file or default_rwth_tarball())
    data = cfg.data
    return generated_gold(data.generated_sizes, data.generated_seed, reverse=data.src_lang == "de")


def _settings(layers: int):
    for layer in [*range(layers), "mean"] if layers > 1 else ["mean"]:
        for shift in (False, True):
            yield layer, shift


def _one_model(name: str, weights, flipped: bool) -> list:
    """One run's rows: the argmax of each target word (row), of each source word (column), and
    the two combined by grow-diag (both read from the same attention)."""
    turn = flip if flipped else (lambda links: links)
    per_target = [turn(argmax_links(w)) for w in weights]
    per_source = [turn(argmax_links(w, per="source")) for w in weights]
    grown = [symmetrise(t, s, "grow-diag") for t, s in zip(per_target, per_source, strict=True)]
    label = name if flipped else f"{name}:"
    return [
        (f"{label} argmax", per_target),
        (f"{label} argmax per source word", per_source),
        (f"{label} grow-diag of both argmaxes", grown),
    ]


def _product_rows(ahead: dict, back: dict, head: str) -> list:
    """The product of the two runs' attention for every pair of their layers (no shift)."""
    return [
        (
            f"layer {fl}{head} x reverse layer {bl}{head}: product",
            [agreement_links(f, b) for f, b in zip(ahead[fl], back[bl], strict=True)],
        )
        for fl in ahead
        for bl in back
    ]


def _scores(gold, links, dev: int, lengths: list[int]) -> dict:
    """AER, precision and recall (percent) on the dev and the reported sentences, and the
    reported ones' AER per English-length bin."""
    out = {}
    for part, sl in (("dev", slice(0, dev)), ("report", slice(dev, None))):
        s = alignment_error_rate(gold[sl], links[sl])
        out[part] = dict(aer=100 * s.aer, precision=100 * s.precision, recall=100 * s.recall)
    bins = aer_by_length(gold[dev:], links[dev:], lengths[dev:])
    out["report"]["by_length"] = [b.percent() for b in bins]
    return out


def _english_lengths(args, cfg, corpus) -> list[int]:
    """Words of each gold pair's English side: RWTH's target; the generated gold's source
    unless the run translates de->en."""
    english = corpus.target if args.gold == "rwth" or cfg.data.src_lang == "de" else corpus.source
    return [len(text.split()) for text in english]


def print_by_length(rows: list[dict]) -> None:
    """A markdown table of the reported sentences' AER per English-length bin."""
    bins = rows[0]["report"]["by_length"]
    print("\nreported AER by English length in words (sentences per bin):\n")
    print("| method | " + " | ".join(f"{b['bin']} ({b['sentences']})" for b in bins) + " |")
    print("|---|" + "---:|" * len(bins))
    for r in rows:
        cells = ["-" if b["aer"] is None else f"{b['aer']:.1f}" for b in r["report"]["by_length"]]
        print(f"| {r['method']} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    from attnkit.apps.translation.decode.run import load_run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", choices=("generated", "rwth"), required=True)
    parser.add_argument("--gold-file", help="DeEnGoldAlignment.tar.gz (default: the shared data)")
    parser.add_argument("--run", required=True)
    parser.add_argument("--reverse-run")
    parser.add_argument("--dev", type=int, default=100, help="sentences for choosing")
    parser.add_argument("--head", type=int, help="read one head (a guided one), not the mean")
    parser.add_argument(
        "--tokens", action="store_true", help="feed the gold's tokens, not running text"
    )
    parser.add_argument("--checkpoint", default="best", choices=("best", "averaged", "last"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()

    cfg = load_run(args.run, args.checkpoint)[0]
    corpus, detok = _gold(args, cfg), not args.tokens
    pairs = list(zip(corpus.source, corpus.target, strict=True))
    layers = getattr(cfg.model, "decoder_layers", 1) if cfg.model.arch == "transformer" else 1
    kw = dict(detok=detok, checkpoint=args.checkpoint, head=args.head)
    rows = [
        ("diagonal (no model)", [diagonal_links(len(s.split()), len(t.split())) for s, t in pairs])
    ]
    ahead, back_at, head = {}, {}, "" if args.head is None else f", head {args.head}"
    for layer, shift in _settings(layers):
        name = f"layer {layer}{head}{', shift' if shift else ''}"
        weights = run_attention(args.run, pairs, layer=layer, shift=shift, **kw)
        if not shift:
            ahead[layer] = weights
        rows += _one_model(name, weights, flipped=False)
        forward = rows[-3][1]  # the per-target argmax of the forward run
        if args.reverse_run:
            swapped = [(t, s) for s, t in pairs]
            back = run_attention(args.reverse_run, swapped, layer=layer, shift=shift, **kw)
            if not shift:
                back_at[layer] = back
            rows += _one_model(f"{name}: reverse", back, flipped=True)
            backward = rows[-3][1]
            for method in SYMMETRISATIONS:
                both = [symmetrise(f, b, method) for f, b in zip(forward, backward, strict=True)]
                rows.append((f"{name}: {method}", both))
    if args.reverse_run:
        rows += _product_rows(ahead, back_at, head)
    lengths = _english_lengths(args, cfg, corpus)
    table = [
        dict(method=name, **_scores(corpus.gold, links, args.dev, lengths)) for name, links in rows
    ]
    best = min(table[1:], key=lambda r: r["dev"]["aer"])
    seconds = time.perf_counter() - start

    _report(args, table, best, len(pairs), seconds)


def _report(args, table: list[dict], best: dict, n: int, seconds: float) -> None:
    """Print the tables and write ``--json``."""
    print(f"$ {' '.join(shlex.quote(a) for a in ['python', *sys.argv])}\n")
    print(
        f"gold: {args.gold}, {n} sentences; "
        f"choosing on 1-{args.dev}, reporting on {args.dev + 1}-{n}"
    )
    print(f"run: {args.run}; reverse: {args.reverse_run}; {seconds:.0f} s\n")
    print("| method | dev AER | reported AER | precision | recall |\n|---|---:|---:|---:|---:|")
    for r in table:
        d, t = r["dev"], r["report"]
        cells = [d["aer"], t["aer"], t["precision"], t["recall"]]
        print(f"| {r['method']} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    print(f"\nchosen on dev: {best['method']}: reported AER {best['report']['aer']:.1f}")
    print_by_length([table[0], best])
    out = args.json or RESULTS / f"shift-att-{args.gold}.json"
    record = dict(
        command=sys.argv,
        gold=args.gold,
        sentences=n,
        dev=args.dev,
        run=args.run,
        reverse_run=args.reverse_run,
        seconds=seconds,
        rows=table,
        chosen=best["method"],
    )
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
