"""Training throughput of every task on each device and precision, side by side in one run.

For each application, one shipped config (its data generated, or Multi30k from
``$ATTNKIT_DATA_DIR``) is built through the App contract (``App.task(cfg)``, the task's own
batches and loss, as the engine trains it); ``--steps`` updates are timed after ``--warmup``
on every device and precision named, and the table gives units per second (translation:
target tokens; the others: examples) and each row's ratio to the first column. Anomaly
detection is left out: it fits one small detector per series (``benchmarks/nab.py``).

    python benchmarks/device_throughput.py --columns cpu:fp32 cuda:fp32 cuda:auto
    python benchmarks/device_throughput.py --columns cpu:fp32 cpu:bf16 --tasks translation
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]  # run as a script, too

CONFIGS = {  # application -> (config, overrides): data generated, or Multi30k
    "translation": ("configs/multi30k-transformer.yaml", ["train.max_tokens=4096"]),
    "text-classification": ("configs/rationales-transformer.yaml", []),
    "image-classification": ("configs/digits-vit.yaml", []),
    "captioning": ("configs/scenes-soft-small.yaml", []),
    "segmentation": ("configs/shapes-attention-unet.yaml", []),
    "stocks": ("configs/stocks-alpha-t-rim.yaml", ["train.arima=false"]),
    "im2latex": ("configs/formulas-im2latex.yaml", []),
}
UNITS = {"translation": "tokens"}


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def throughput(task, device, choice, args, compiled: bool = False) -> float:
    """Median over ``args.repeats`` of units per second over ``args.steps`` updates of
    ``task`` (after ``args.warmup``), its model ``torch.compile``d when ``compiled``."""
    import torch

    steps, warmup, repeats = args.steps, args.warmup, args.repeats
    torch.manual_seed(0)
    model = task.build_model().to(device)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-4)
    forward = torch.compile(model) if compiled else model
    scaler = choice.scaler(device)
    batches = list(itertools.islice(itertools.cycle(task.epoch_batches(1)), warmup + steps))
    rates = []
    for _ in range(repeats):
        units, start = 0.0, None
        for i, batch in enumerate(batches):
            if i == warmup:
                _sync(device)
                start, units = time.perf_counter(), 0.0
            with choice.autocast(device):
                out = task.loss(forward, task.collate(batch))
            loss = out.total / max(task.units(batch), 1e-12)
            (scaler.scale(loss) if scaler else loss).backward()
            if scaler:
                scaler.step(optimiser)
                scaler.update()
            else:
                optimiser.step()
            optimiser.zero_grad(set_to_none=True)
            units += task.units(batch)
        _sync(device)
        rates.append(units / (time.perf_counter() - start))
    return statistics.median(rates)


def measure(name: str, columns: list[tuple[str, str]], args) -> dict:
    """One application's row: units per second for each (device, precision) column."""
    from attnkit import devices, precision
    from attnkit.apps import app_named

    app = app_named(name)
    path, overrides = CONFIGS[name]
    cfg = app.load_config(ROOT / path, overrides)
    from attnkit.engine.rundir import RunDir

    task = app.task(cfg)
    task.prepare(RunDir(Path(tempfile.mkdtemp(prefix=f"throughput-{name}-"))), resume=False)
    row = {"task": name, "config": path, "units": UNITS.get(name, "examples")}
    for device_name, setting, *flags in columns:
        device = devices.pick(device_name)
        choice = precision.choose(setting, device)
        key = f"{device_name} {setting}" + (f" ({choice.name})" if setting == "auto" else "")
        key += " compiled" if "compile" in flags else ""
        try:
            row[key] = throughput(task, device, choice, args, "compile" in flags)
        except Exception as err:  # one column's failure is reported, the others still run
            row[key] = f"failed: {type(err).__name__}: {str(err)[:120]}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--columns",
        nargs="+",
        default=["cpu:fp32", "auto:auto"],
        help="DEVICE:PRECISION[:compile] ...",
    )
    parser.add_argument("--tasks", nargs="+", default=sorted(CONFIGS))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    columns = [_column(c) for c in args.columns]
    rows = []
    for name in args.tasks:  # each row as it is measured (a long run shows its progress)
        rows.append(measure(name, columns, args))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    _print(rows)
    if args.json:
        meta = {"torch": torch.__version__, "threads": torch.get_num_threads(), **vars(args)}
        meta["json"] = str(args.json)
        if torch.cuda.is_available():
            meta["gpu"] = torch.cuda.get_device_name(0)
        args.json.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1), "utf-8")


def _column(text: str) -> tuple[str, ...]:
    """``cpu:fp32``, ``cuda:0:bf16``, ``cpu:fp32:compile`` -> (device, precision, *flags)."""
    parts = text.split(":")
    if len(parts) > 1 and parts[0] == "cuda" and parts[1].isdigit():
        parts = [f"cuda:{parts[1]}", *parts[2:]]
    return (parts[0], parts[1] if len(parts) > 1 else "fp32", *parts[2:])


def _print(rows: list[dict]) -> None:
    keys = [k for k in rows[0] if k not in ("task", "config", "units")]
    print("| task | units/s in | " + " | ".join(keys) + " |")
    print("|" + " --- |" * (len(keys) + 2))
    for row in rows:
        first = row[keys[0]]
        cells = []
        for k in keys:
            v = row[k]
            if isinstance(v, float) and isinstance(first, float):
                cells.append(f"{v:,.0f} ({v / first:.1f}x)")
            else:
                cells.append(str(v))
        print(f"| {row['task']} | {row['units']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
