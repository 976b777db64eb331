"""SST-2 dev accuracy: BiGRU + attention from scratch, fine-tuned MiniLM, and TF-IDF, in one run.

Targets (issue 7): BiGRU + attention >= 85%, fine-tuned MiniLM >= 89%; the TF-IDF + logistic
regression baseline is measured in the same run. Each model trains from its config into
``--runs/NAME``; the table is printed and written as JSON (``--json``), with wall times and the
device each model trained on.

    nice -n 10 python benchmarks/sst2.py --models bigru,tfidf
    python benchmarks/sst2.py --models minilm --minilm-config configs/sst2-minilm.yaml  # GPU
    nice -n 10 python benchmarks/sst2.py --models minilm \
        --minilm-config configs/sst2-minilm-cpu.yaml

Data: ``$ATTNKIT_DATA_DIR/sst2`` (default ``../shared/data/sst2``), see its SOURCE.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]  # run as a script, too (benchmarks.suites)

TARGETS = {"bigru": 0.85, "minilm": 0.89, "transformer": None, "tfidf": None}


def _train(name: str, config: Path, runs: Path) -> dict:
    from attnkit.apps.classification.app import APP
    from attnkit.apps.classification.classifier import TextClassifier
    from attnkit.apps.classification.data import load_split

    run_dir = runs / name
    started = time.perf_counter()
    summary = APP.train(APP.load_config(config), run_dir, resume=False, progress=True)
    wall = time.perf_counter() - started
    clf = TextClassifier.load(run_dir)
    dev = load_split(clf.config, "dev")
    acc = clf.accuracy([e.text for e in dev], [e.label for e in dev])
    metrics = json.loads((run_dir / "metrics.json").read_text())
    history, t = metrics["history"], clf.config.train
    per_epoch = -(-len(load_split(clf.config, "train")) // t.batch_size)  # updates
    return {
        "model": name,
        "config": str(config.relative_to(ROOT) if config.is_relative_to(ROOT) else config),
        "dev_accuracy": acc,
        "best_epoch": metrics["best_epoch"],
        "updates": history[-1]["step"],
        "batch_size": t.batch_size,
        "epochs": len(history),
        # max_minutes, max_steps or patience ended training before the last epoch's end
        "stopped_early": history[-1]["step"] < t.epochs * per_epoch,
        "device": metrics.get("device"),
        "train_seconds": metrics["seconds"],
        "wall_seconds": wall,
        "summary": dataclasses.asdict(summary),
    }


def _tfidf() -> dict:
    from attnkit.apps.classification.data import load_sst2
    from attnkit.apps.classification.token_weights import TfidfBaseline

    started = time.perf_counter()
    train, dev = load_sst2(None, "train"), load_sst2(None, "dev")
    model = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
    acc = model.accuracy([e.text for e in dev], [e.label for e in dev])
    wall = time.perf_counter() - started
    return {
        "model": "tfidf",
        "config": "TF-IDF (unigrams, sublinear tf) + LogisticRegression(C=4)",
        "dev_accuracy": acc,
        "device": "cpu",
        "wall_seconds": wall,
    }


def _arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="bigru,tfidf", help="bigru,minilm,transformer,tfidf")
    parser.add_argument("--bigru-config", type=Path, default=ROOT / "configs/sst2-bigru.yaml")
    parser.add_argument("--minilm-config", type=Path, default=ROOT / "configs/sst2-minilm.yaml")
    parser.add_argument(
        "--transformer-config", type=Path, default=ROOT / "configs/sst2-transformer.yaml"
    )
    parser.add_argument("--runs", type=Path, default=ROOT / "runs/bench-sst2")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/sst2.json")
    return parser.parse_args(argv)


def sst2_report(report, rows: list[dict], cuda: str | None = None):
    """``rows`` (one per model) in ``report``: a result per model, its wall time as the time,
    its dev accuracy, target and the rest of its row as metrics; the targets as ``data``."""
    from benchmarks.suites.report import Result

    for row in rows:
        target = TARGETS.get(row["model"])
        met = None if target is None else row["dev_accuracy"] >= target
        params = {"config": row["config"], "device": row["device"]}
        skip = ("model", "config", "device", "wall_seconds")
        metrics = {"target": target, "met": met, **{k: v for k, v in row.items() if k not in skip}}
        report.results.append(
            Result("sst2 dev", row["model"], params, [row["wall_seconds"]], metrics)
        )
    report.notes.append("time: wall seconds of each model's training and scoring (one run each)")
    report.data.update({"targets": TARGETS, "cuda": cuda})
    return report


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    import torch

    from benchmarks.suites.report import Report, script_command

    report = Report("sst2", script_command("benchmarks/sst2.py", argv), vars(args))
    rows = []
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        if name == "tfidf":
            rows.append(_tfidf())
        elif name in ("bigru", "minilm", "transformer"):
            rows.append(_train(name, getattr(args, f"{name}_config"), args.runs))
        else:
            raise SystemExit(
                f"unknown model {name!r}; choose from bigru, minilm, transformer, tfidf"
            )
        print(json.dumps(rows[-1]), flush=True)
    print(f"\n{'model':<12} {'dev acc':>8} {'target':>7} {'met':>4} {'device':>7} {'wall s':>8}")
    for row in rows:
        target = TARGETS.get(row["model"])
        met = "-" if target is None else ("yes" if row["dev_accuracy"] >= target else "no")
        shown = "-" if target is None else f"{100 * target:.0f}%"
        print(
            f"{row['model']:<12} {100 * row['dev_accuracy']:>7.2f}% {shown:>7} {met:>4} "
            f"{row['device']:>7} {row['wall_seconds']:>8.0f}"
        )
    cuda = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    sst2_report(report, rows, cuda).write(args.json)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
