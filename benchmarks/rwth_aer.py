"""AER of attention read as word alignment on the 508 RWTH German-English gold sentences
(Vilar, Popović & Ney 2006), per extraction method (:mod:`attnkit.apps.translation.align.aer`).

    ATTNKIT_DATA_DIR=../shared/data python benchmarks/rwth_aer.py --run DE_EN_RUN \\
        [--reverse-run EN_DE_RUN] [--layer mean|N] [--detok] [--shift] [--limit N]

The model is teacher-forced on the gold reference (not its own translation); pieces are merged
into the gold's words. Prints the command line, the runs and a markdown table (AER, precision
and recall in percent; links = predicted links). The gold tarball is read from
``$ATTNKIT_DATA_DIR/word-alignment/rwth-deen`` (else ``../shared/data``), or ``--gold``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

import torch

from attnkit.apps.translation.align.aer import default_rwth_tarball, format_table, rwth_aer
from attnkit.metrics.aer import read_rwth_deen


def _layer(text: str):
    return text if text == "mean" else int(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a de->en run directory")
    parser.add_argument("--reverse-run", help="an en->de run directory (symmetrisation)")
    parser.add_argument("--layer", type=_layer, default="mean", help='"mean" or a decoder layer')
    parser.add_argument("--detok", action="store_true", help="feed running text, not tokens")
    parser.add_argument(
        "--shift", action="store_true", help="attention of the step that reads each word"
    )
    parser.add_argument("--limit", type=int, help="only the first N sentences")
    parser.add_argument("--checkpoint", default="best", choices=("best", "averaged", "last"))
    parser.add_argument("--gold", help="DeEnGoldAlignment.tar.gz (default: the shared data)")
    parser.add_argument(
        "--any-langs", action="store_true", help="do not check the runs' languages (tests)"
    )
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    corpus = read_rwth_deen(args.gold or default_rwth_tarball())
    start = time.perf_counter()
    rows = rwth_aer(
        args.run,
        args.reverse_run,
        corpus=corpus,
        layer=args.layer,
        detok=args.detok,
        shift=args.shift,
        limit=args.limit,
        checkpoint=args.checkpoint,
        check_langs=not args.any_langs,
    )
    seconds = time.perf_counter() - start
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"$ {command}\n")
    n = rows[0].scores.sentences
    print(
        f"RWTH de-en gold: {n} sentences, {rows[0].scores.sure} sure and "
        f"{rows[0].scores.possible - rows[0].scores.sure} possible-only links"
    )
    print(f"forward (de->en): {args.run}")
    if args.reverse_run:
        print(f"reverse (en->de): {args.reverse_run}")
    print(
        f"layer: {args.layer}, heads averaged; detok: {args.detok}; shift: {args.shift}; "
        f"checkpoint: {args.checkpoint}; {seconds:.1f} s\n"
    )
    print(format_table(rows))


if __name__ == "__main__":
    main()
