"""The cost of each position scheme at the shipped size (``configs/positions.yaml``'s model):
a training step (forward, loss, backward, Adam) and greedy decoding with the KV cache.

    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE python benchmarks/positions.py --out FILE

Every round times every scheme once, in turn, on the same batch, so each round's ratio to
``absolute`` is measured under the same load; the report gives the medians over ``--repeats``
rounds (issue 21's target: no scheme above 1.3x ``absolute`` per training step).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from attnkit.apps.translation.experiments.compare import packaged_config
from attnkit.apps.translation.models.build import build_model
from attnkit.attention.positions import POSITIONS
from attnkit.decoding.greedy import greedy_decode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.report import Comparison, Report, Result, script_command  # noqa: E402

VOCAB, BOS, EOS = 1000, 2, 3


def models(schemes) -> dict:
    """One model per scheme, built from the packaged ``positions`` config."""
    built = {}
    for scheme in schemes:
        torch.manual_seed(0)
        cfg = packaged_config("positions", [f"model.positions={scheme}"])
        built[scheme] = build_model(cfg.model, VOCAB, VOCAB)
    return built


def train_step(model, optimiser, src, mask, tgt) -> float:
    """Seconds of one teacher-forced update with label smoothing 0.1 (the config's)."""
    model.train()
    start = time.perf_counter()
    logits = model(src, mask, tgt[:, :-1]).logits  # (B, T - 1, V)
    loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), label_smoothing=0.1)
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return time.perf_counter() - start


@torch.no_grad()
def decode(model, src, mask, steps: int) -> float:
    """Seconds of greedy decoding for exactly ``steps`` target tokens (EOS never stops it)."""
    model.eval()
    start = time.perf_counter()
    greedy_decode(model, src, mask, bos_id=BOS, eos_id=-1, max_len=steps)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--train-len", type=int, default=30, help="subwords, as <= 20 words")
    parser.add_argument("--decode-batch", type=int, default=32)
    parser.add_argument("--decode-len", type=int, default=70, help="as 41-50-word sentences")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--schemes", nargs="+", default=list(POSITIONS))
    parser.add_argument("--out", type=Path, default=None, help="write the report here (JSON)")
    args = parser.parse_args(argv)
    report = Report("positions", script_command("benchmarks/positions.py", argv), vars(args))
    built = models(args.schemes)
    optimisers = {s: torch.optim.Adam(m.parameters(), lr=1e-4) for s, m in built.items()}
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, VOCAB, (args.batch, args.train_len), generator=g)
    tgt = torch.randint(4, VOCAB, (args.batch, args.train_len + 1), generator=g)
    long_src = torch.randint(4, VOCAB, (args.decode_batch, args.decode_len), generator=g)
    mask, long_mask = torch.ones_like(src, dtype=torch.bool), torch.ones_like(long_src).bool()
    times = {(kind, s): [] for kind in ("train", "decode") for s in args.schemes}
    for round_ in range(args.repeats + 1):  # round 0 warms up
        for scheme, model in built.items():
            step = train_step(model, optimisers[scheme], src, mask, tgt)
            took = decode(model, long_src, long_mask, args.decode_len)
            if round_:
                times["train", scheme].append(step)
                times["decode", scheme].append(took)
    print(f"threads={torch.get_num_threads()} repeats={args.repeats} (medians; ratio per round)")
    positions_report(report, times, args)
    for c in report.comparisons:
        print(f"{c.case}: {c.ours:>8} / absolute {statistics.median(c.ratios):.2f}x")
    if args.out is not None:
        report.write(args.out)
        print(f"wrote {args.out}")


def positions_report(report: Report, times: dict, args) -> Report:
    """Each scheme's step and decoding times as results; per-round ratios to ``absolute``."""
    cases = {
        "train": f"train B{args.batch} T{args.train_len}",
        "decode": f"greedy B{args.decode_batch} S=T={args.decode_len}",
    }
    for (kind, scheme), seconds in times.items():
        report.results.append(Result(cases[kind], scheme, {"positions": scheme}, seconds))
        base = times.get((kind, "absolute"))
        if base and scheme != "absolute":
            ratios = [a / b for a, b in zip(seconds, base, strict=True)]
            target, met = (
                ("<= 1.3x", statistics.median(ratios) <= 1.3) if kind == "train" else (None, None)
            )
            report.comparisons.append(
                Comparison(cases[kind], scheme, "absolute", ratios, target=target, met=met)
            )
    return report


if __name__ == "__main__":
    main()
