"""Show, Attend and Tell on generated scenes: soft vs hard attention vs no attention.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/captioning.py

Trains ``configs/scenes-{soft,soft-xu,hard,hard-xu,none}.yaml`` (``--steps`` overrides their
budget in updates) into ``--runs/scenes-MODE``, scores each best checkpoint on the held-out test
split (sacreBLEU BLEU-4, exact match, attention mass inside the named object's box and pointing
accuracy per emitted noun, at the noun's step and over its phrase), prints the table, writes
``benchmarks/results/captioning.json`` and draws one test caption of the soft model to
``docs/caption-attention.png``. ``--reuse`` skips runs already trained and scored.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import torch

from attnkit.apps.captioning.config import load_experiment
from attnkit.apps.captioning.inference import caption_scenes
from attnkit.apps.captioning.run import CaptioningRun
from attnkit.apps.captioning.training import CaptioningTask
from attnkit.apps.captioning.views import plot_caption
from attnkit.engine.trainer import fit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.report import Report, Result, script_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET_POINTING = 0.80  # the target for soft attention


def budget(cfg, args):
    """``cfg`` with the command line's overrides: ``--steps`` updates in all, validated every
    ``--eval-every`` (the engine's ``updates_per_epoch``), ``--n-train`` scenes."""
    t = cfg.train
    if args.eval_every:
        t = replace(t, updates_per_epoch=args.eval_every)
    if args.steps:
        epochs = -(-args.steps // t.updates_per_epoch)  # the last epoch may be cut short
        t = replace(t, epochs=epochs, max_steps=args.steps)
    data = replace(cfg.data, n_train=args.n_train) if args.n_train else cfg.data
    return replace(cfg, train=t, data=data)


def run(mode: str, args) -> dict:
    cfg = budget(load_experiment(ROOT / "configs" / f"scenes-{mode}.yaml"), args)
    out = Path(args.runs) / f"scenes-{mode}"
    done = out / "metrics.json"
    if not (args.reuse and done.is_file() and "test" in json.loads(done.read_text())):
        fit(CaptioningTask(cfg), out, resume="auto" if args.resume else False, progress=True)
        CaptioningRun.load(out).score("test")
    metrics = json.loads(done.read_text())  # the history, the best epoch, the test scores
    return {
        "model": mode,
        "attention": cfg.model.attention,
        "feed_context": cfg.model.feed_context,
        "run_dir": str(out),
        "steps": cfg.train.total_updates,
        "n_train": cfg.data.n_train,
        "best_step": metrics["best_step"],
        "train_seconds": round(sum(h["seconds"] for h in metrics["history"]), 1),
        "test": metrics["test"],
    }


def picture(run_dir: Path, path: Path) -> str:
    """A model's caption of the first test scene with the most objects, drawn per word."""
    run = CaptioningRun.load(run_dir)
    scenes = sorted(run.scenes("test")[:50], key=lambda s: -len(s.objects))[:1]
    cap = caption_scenes(run.model, run.vocab, scenes)[0]
    plot_caption(scenes[0].image, cap.words, cap.alpha, path, boxes=scenes[0].boxes.tolist())
    return cap.text


def _arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="soft,soft-xu,hard,hard-xu,none")
    parser.add_argument("--steps", type=int, default=0, help="override the budget in updates")
    parser.add_argument("--eval-every", type=int, default=0, help="override updates_per_epoch")
    parser.add_argument("--n-train", type=int, default=0, help="override data.n_train")
    parser.add_argument("--runs", default="runs/captioning")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="reuse runs already scored")
    parser.add_argument("--json", default=str(ROOT / "benchmarks/results/captioning.json"))
    parser.add_argument("--picture", default=str(ROOT / "docs/caption-attention.png"))
    parser.add_argument("--picture-model", default="soft", help="whose caption to draw")
    return parser.parse_args(argv)


def print_rows(rows: list[dict]) -> None:
    print(
        f"\n{'model':8} {'steps':>5} {'train s':>8} {'BLEU':>6} {'exact':>6} {'in box':>7} "
        f"{'pointing':>8} {'phrase in box':>13} {'phrase pointing':>15} {'nouns':>6}"
    )
    for r in rows:
        t = r["test"]
        keys = ("mass_in_box", "pointing", "phrase_mass_in_box", "phrase_pointing")
        widths = (7, 8, 13, 15)
        # the no-attention model has no map: its "pointing" would be the argmax of zeros
        cells = [
            f"{'-' if r['attention'] == 'none' else f'{t[k]:.3f}':>{w}}"
            for k, w in zip(keys, widths, strict=True)
        ]
        print(
            f"{r['model']:8} {r['steps']:5d} {r['train_seconds']:8.0f} {t['bleu']:6.2f} "
            f"{t['exact_match']:6.3f} {' '.join(cells)} {t['nouns']:6d}"
        )


def captioning_report(report: Report, rows: list[dict], drawn: dict | None = None) -> Report:
    """``rows`` (one per model, from :func:`run`) in ``report``: a result per model with its
    training time and its test scores as metrics; the target and the picture as ``data``."""
    for r in rows:
        params = {k: r[k] for k in ("attention", "feed_context", "steps", "n_train", "run_dir")}
        metrics = {"best_step": r["best_step"], **r["test"]}
        report.results.append(
            Result("scenes test", r["model"], params, [r["train_seconds"]], metrics)
        )
    report.notes.append(
        "time: training seconds of each model (one run each); the 'none' model has no attention "
        "map: its attention columns (the argmax of an all-zero map is cell 0) measure nothing"
    )
    report.data["target_soft_pointing"] = TARGET_POINTING
    if drawn:
        report.data["picture"] = drawn
    return report


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    torch.set_num_threads(1)
    report = Report("captioning", script_command("benchmarks/captioning.py", argv), vars(args))
    rows = [run(mode, args) for mode in args.models.split(",")]
    print_rows(rows)
    drawn = None
    soft = [r for r in rows if r["model"] == args.picture_model]
    if soft and args.picture:
        drawn = {
            "path": args.picture,
            "caption": picture(Path(soft[0]["run_dir"]), Path(args.picture)),
        }
        print(f"picture: {args.picture} ({drawn['caption']})")
    captioning_report(report, rows, drawn).write(args.json)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
