"""attnkit's own decoding time on the ``decode`` suite's work, without training or JoeyNMT:
for timing one change to the search against the code before it.

The model is the suite's (``benchmarks.suites.seq2seq_suites``: Transformer 3+3, d 256, or
biGRU + Bahdanau, 8,000 BPE pieces) freshly initialised with seed 1; it translates the first
``--sentences`` of test2016 in the suite's 4,000-token batches, every sentence forced to
``--steps`` decoder steps (no token ends one), as the suite forces both toolkits. Untrained
weights do the same work as trained ones under forced lengths. One untimed warm-up on 20
sentences, then ``--repeats`` timed passes; prints the median and min-max.

To compare two versions, run it alternately in fresh processes against each version's
sources (``git archive REV | tar -x -C DIR``; ``PYTHONPATH=DIR/src:DIR``), one thread:

    ATTNKIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 \
        python benchmarks/beam_timing.py transformer --beam 5

``--profile`` prints torch.profiler's operator table of one pass instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import types
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=("transformer", "rnn"))
    parser.add_argument("--beam", type=int, default=5, help="1: greedy")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--steps", type=int, default=30, help="decoder steps per sentence")
    parser.add_argument("--data-dir", default=os.environ.get("ATTNKIT_DATA_DIR", "data"))
    parser.add_argument("--work-dir", default=str(Path(tempfile.gettempdir()) / "attnkit-bench"))
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    from attnkit.apps.translation.models.build import build_model
    from attnkit.runtime import apply_mallopt
    from benchmarks.suites import seq2seq_suites as suite

    apply_mallopt()  # as `python -m benchmarks` and the CLI do
    opts = types.SimpleNamespace(
        data_dir=args.data_dir, tiny=False, pairs=100, sentences=args.sentences
    )
    data = suite.prepare_data(opts, Path(args.work_dir))
    cfg, tok = suite._config(args.model, False), data.tokenizer
    torch.manual_seed(1)
    model = build_model(cfg.model, tok.src_vocab_size, tok.tgt_vocab_size, tok.pad_id).eval()
    suite.decode_attnkit(cfg, replace(data, test_sources=data.test_sources[:20]), model, args.beam)
    suite.MAX_OUTPUT = args.steps  # read by decode_attnkit at each call
    if args.profile:
        from torch.profiler import profile

        with profile() as prof:
            suite.decode_attnkit(cfg, data, model, args.beam)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
        return []
    times = [suite.decode_attnkit(cfg, data, model, args.beam)[0] for _ in range(args.repeats)]
    print(
        f"{args.model} beam {args.beam}, {args.sentences} sentences x {args.steps} steps: "
        f"median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"
    )
    return times


if __name__ == "__main__":
    main()
