"""Training steps of the im2latex model in float32 and with bfloat16 autocast, side by side.

    OMP_NUM_THREADS=2 python benchmarks/im2latex_speed.py --config configs/im2latex-sample.yaml \
        --out benchmarks/results/im2latex-speed.json

The model is the config's (:class:`~attnkit.apps.im2latex.model.FormulaReader`), the batch a
fixed random one of the size a generated formula has (``--height`` x ``--width`` pixels,
``--tokens`` target tokens), so no data is rendered. Each round times one training step
(teacher-forced forward, cross-entropy, backward, Adam) in each precision, the order rotated
per round (:func:`benchmarks.suites.measure.interleave`); the report gives the medians and
the per-round ratios. ``train.bf16`` runs the engine's steps under the same autocast.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from attnkit.apps.im2latex.config import load_config
from attnkit.apps.im2latex.model import FormulaReader

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.measure import interleave  # noqa: E402
from benchmarks.suites.report import Comparison, Report, Result, script_command  # noqa: E402


def step_fn(model: FormulaReader, src, mask, ids, bf16: bool):
    """One training step of ``model`` on ``src (B, 1, H, W)``, ``ids (B, T + 1)``."""
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(src, mask, ids[:, :-1]).logits  # (B, T, V)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), ids[:, 1:].flatten())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()

    return step


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/im2latex-sample.yaml")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--height", type=int, default=64)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=24)
    parser.add_argument("--vocab", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="write the report here (JSON)")
    args = parser.parse_args(argv)
    report = Report(
        "im2latex-speed", script_command("benchmarks/im2latex_speed.py", argv), vars(args)
    )
    torch.manual_seed(0)
    model = FormulaReader(load_config(args.config).model, args.vocab)
    rows, cols = model.stride
    src = torch.rand(args.batch, 1, args.height, args.width)  # (B, 1, H, W)
    mask = torch.ones(args.batch, (args.height // rows) * (args.width // cols), dtype=torch.bool)
    ids = torch.randint(3, args.vocab, (args.batch, args.tokens + 1))  # (B, T + 1)
    steps = {
        "float32": step_fn(model, src, mask, ids, bf16=False),
        "bf16 autocast": step_fn(copy.deepcopy(model), src, mask, ids, bf16=True),
    }
    times = interleave(steps, args.repeats, warmup=2)
    case = f"train step B{args.batch} {args.height}x{args.width}, {args.tokens} tokens"
    print(f"threads={torch.get_num_threads()} repeats={args.repeats} (medians)")
    for name, seconds in times.items():
        rate = statistics.median(args.batch / s for s in seconds)
        report.results.append(Result(case, name, {}, seconds, {"images/s": rate}))
        print(f"{name:<14} {rate:8.1f} images/s")
    ratios = [f / b for f, b in zip(times["float32"], times["bf16 autocast"], strict=True)]
    report.comparisons.append(
        Comparison(
            case, "bf16 autocast", "float32", ratios, kind="speed-up (float32 time / bf16 time)"
        )
    )
    print(f"bf16 / float32: {statistics.median(ratios):.2f}x")
    if args.out is not None:
        report.write(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
