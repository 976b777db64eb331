"""Teacher-forced training step of a Bahdanau GRU with the attention keys projected once per
sentence (``Memory.keys``, what attnkit does) vs re-projected at every decoder step.

    OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE python benchmarks/prepared_keys.py

Prints the median time of each variant over ``--repeats`` alternating runs and their ratio;
``--out FILE`` also writes them as a report (``attnkit-bench/1``, as ``attnkit bench`` does).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

from attnkit.apps.translation.models.recurrent import RNNSeq2Seq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.report import Comparison, Report, Result, script_command  # noqa: E402


def step(model: RNNSeq2Seq, src, mask, tgt, prepared: bool) -> float:
    """One forward + backward; with ``prepared=False`` the memory carries no keys, so the
    attention layer projects the encoder states again at every step."""
    start = time.perf_counter()
    memory = model.encode(src, mask)
    if not prepared:
        memory.keys = None
    state, total = model.init_state(memory), 0.0
    for t in range(tgt.size(1)):
        out = model.decode_step(memory, state, tgt[:, t])
        state, total = out.state, total + out.logits.logsumexp(-1).mean()
    total.backward()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=40)
    parser.add_argument("--src-len", type=int, default=40)
    parser.add_argument("--tgt-len", type=int, default=50)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--out", type=Path, default=None, help="write the report here (JSON)")
    args = parser.parse_args(argv)
    report = Report(
        "prepared_keys", script_command("benchmarks/prepared_keys.py", argv), vars(args)
    )
    torch.manual_seed(0)
    model = RNNSeq2Seq(1000, 1000, embed_dim=64, hidden_dim=args.hidden, attention="bahdanau")
    src = torch.randint(4, 1000, (args.batch, args.src_len))
    mask = torch.ones_like(src, dtype=torch.bool)
    tgt = torch.randint(4, 1000, (args.batch, args.tgt_len))
    times: dict[bool, list[float]] = {True: [], False: []}
    for prepared in (True, False):  # warm-up
        step(model, src, mask, tgt, prepared)
    for _ in range(args.repeats):
        for prepared in (True, False):
            times[prepared].append(step(model, src, mask, tgt, prepared))
    once, every = statistics.median(times[True]), statistics.median(times[False])
    print(
        f"threads={torch.get_num_threads()} batch={args.batch} S={args.src_len} "
        f"T={args.tgt_len} hidden={args.hidden} repeats={args.repeats}"
    )
    print(f"keys projected once:       median {once * 1000:.0f} ms")
    print(f"keys projected every step: median {every * 1000:.0f} ms")
    print(f"ratio every/once: {every / once:.2f}")
    if args.out is not None:
        prepared_keys_report(report, times).write(args.out)
        print(f"wrote {args.out}")


def prepared_keys_report(report: Report, times: dict[bool, list[float]]) -> Report:
    """Both variants' step times as results, and their ratio per round (once/every, below 1 =
    projecting the keys once is faster) as a comparison."""
    opts = report.options
    case = (
        f"B{opts.get('batch')} S{opts.get('src_len')} T{opts.get('tgt_len')} H{opts.get('hidden')}"
    )
    for prepared, impl in ((True, "keys once"), (False, "keys every step")):
        report.results.append(Result(case, impl, {"prepared": prepared}, times[prepared]))
    ratios = [a / b for a, b in zip(times[True], times[False], strict=True)]
    report.comparisons.append(Comparison(case, "keys once", "keys every step", ratios))
    return report


if __name__ == "__main__":
    main()
