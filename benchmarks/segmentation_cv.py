"""U-Net and Attention U-Net on ISBI 2012 by 5-fold cross-validation over the 30 labelled
slices (issue 38): pixel F1 beside its label ceiling, membrane F1 with a 1- and 2-pixel border
tolerance, and the challenge's V-Rand and V-Info, mean and spread over the folds.

    python benchmarks/segmentation_cv.py --runs runs/isbi-cv \\
        --out benchmarks/results/segmentation-isbi-cv.json

Each (model, fold) trains ``attnkit train CONFIG -o RUNS/MODEL-foldK --set data.fold=K`` with
the settings below (512 x 512 slices, 256 x 256 tiles, five levels, bf16, flips and turns, a
time limit), two trainings at a time with one thread each (the machine's 2 cores); a run that
has finished (``RUNS/MODEL-foldK.done``) is not trained again (``--retrain`` to redo). Then
``attnkit evaluate RUN --json`` scores each fold's 6 test slices, and the report holds every
fold and the mean and standard deviation per model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.suites.report import Report, Result, script_command  # noqa: E402

CONFIGS = {"unet": "configs/isbi-unet.yaml", "attention-unet": "configs/isbi-attention-unet.yaml"}
SETTINGS = [
    "data.size=512",
    "train.crop=256",
    "model.channels=[16, 32, 64, 128, 256]",
    "train.bf16=true",
    "train.elastic=0",
    "train.flips=true",
    "train.test_flips=true",
    "train.epochs=2000",
]
SCORES = ("f1", "f1_tol1", "f1_tol2", "v_rand", "v_info", "precision", "recall", "dice")
CALIBRATED = ("threshold_calibrated", "f1_calibrated", "f1_tol2_calibrated")


def train_one(model: str, fold: int, args) -> Path:
    """Train (model, fold) unless its run finished already; returns the run directory."""
    out = args.runs / f"{model}-fold{fold}"
    done = args.runs / f"{model}-fold{fold}.done"  # written when the training returned
    if done.is_file() and not args.retrain:
        return out
    sets = [*SETTINGS, f"data.fold={fold}", f"train.max_minutes={args.minutes}"]
    sets += ["train.threads=1", *args.set]
    command = [sys.executable, "-m", "attnkit", "train", CONFIGS[model], "-o", str(out)]
    command += [w for s in sets for w in ("--set", s)]
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    log = args.runs / f"{model}-fold{fold}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as f:
        subprocess.run(command, check=True, stdout=f, stderr=subprocess.STDOUT, env=env)
    done.write_text(" ".join(command) + "\n")
    return out


def evaluate(run: Path) -> dict:
    """``attnkit evaluate RUN --json``'s test metrics, and with ``_flips`` the same averaged
    over the 8 flips and turns."""
    command = [sys.executable, "-m", "attnkit", "evaluate", str(run), "--json"]
    env = os.environ | {"OMP_NUM_THREADS": "2"}
    answer = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    scores = json.loads(answer.stdout)
    flips = {}
    for table in scores.get("tables", []):  # "score, plain, flips": the 8 flips and turns
        if table.get("columns") == ["score", "plain", "flips"]:
            flips = {f"{row[0]}_flips": row[2] for row in table["rows"]}
    return scores["metrics"] | flips


def ceilings(folds: list[int]) -> dict:
    """Pixel F1 of each fold's test labels against themselves dilated and eroded by 1 px."""
    from attnkit.apps.segmentation.data import load_isbi
    from attnkit.metrics.boundaries import label_ceiling

    found = {}
    for fold in folds:
        masks = [s.mask[0] for s in load_isbi(None, "test", fold=fold)]  # (512, 512) each
        found[f"fold {fold}"] = vars(label_ceiling(masks))
    return found


THRESHOLDS = [round(0.3 + 0.05 * i, 2) for i in range(9)]  # 0.30 .. 0.70


def fold_curves(run: Path) -> dict[str, list[float]]:
    """Pixel F1 and F1 within 2 px of the run's fold's test slices at each threshold, on the
    probabilities averaged over the 8 flips and turns."""
    from attnkit.apps.segmentation.run import SegmentationRun
    from attnkit.apps.segmentation.sets import load_sets
    from attnkit.apps.segmentation.training import predict_set
    from attnkit.metrics.boundaries import tolerant_f1

    loaded = SegmentationRun.load(run)
    test = load_sets(loaded.config.data)["test"]
    probs, _ = predict_set(loaded.model, test, flips=True)  # (N, 1, H, W)
    truth = test.masks > 0.5
    curves = {"f1": [], "f1_tol2": []}
    for t in THRESHOLDS:
        curves["f1"].append(tolerant_f1(probs > t, truth, 0).f1)
        curves["f1_tol2"].append(tolerant_f1(probs > t, truth, 2).f1)
    return curves


def calibrated(curves: list[dict]) -> list[dict]:
    """Each fold scored at the threshold that the *other* folds' held-out slices prefer (the
    best mean pixel F1 over them): the membrane thickness calibrated on held-out slices."""
    found = []
    for k, mine in enumerate(curves):
        others = [c["f1"] for j, c in enumerate(curves) if j != k]
        best = max(range(len(THRESHOLDS)), key=lambda i: statistics.mean(o[i] for o in others))
        found.append({"threshold": THRESHOLDS[best], **{n: v[best] for n, v in mine.items()}})
    return found


def summarise(rows: dict, report: Report) -> None:
    summary = {}
    for model, folds in rows.items():
        summary[model] = {}
        for name in SCORES + tuple(f"{s}_flips" for s in SCORES) + CALIBRATED:
            values = [f[name] for f in folds if name in f]
            if len(values) == len(folds) and values:
                spread = statistics.stdev(values) if len(values) > 1 else 0.0
                summary[model][name] = {"mean": statistics.mean(values), "sd": spread}
        cells = {k: f"{v['mean']:.4f} ± {v['sd']:.4f}" for k, v in summary[model].items()}
        print(model, cells, flush=True)
    report.data = {"summary": summary}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=Path("runs/isbi-cv"))
    parser.add_argument("--out", type=Path, default=Path("segmentation-isbi-cv.json"))
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--models", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--minutes", type=float, default=15.0, help="training time per run")
    parser.add_argument("--parallel", type=int, default=2, help="trainings at a time")
    parser.add_argument("--set", action="append", default=[], help="more config overrides")
    parser.add_argument("--retrain", action="store_true")
    args = parser.parse_args(argv)
    jobs = [(m, k) for k in args.folds for m in args.models]
    with ThreadPoolExecutor(args.parallel) as pool:
        runs = list(pool.map(lambda job: train_one(*job, args), jobs))
    report = Report(
        "segmentation-isbi-cv", script_command("benchmarks/segmentation_cv.py", argv), vars(args)
    )
    rows = {m: [] for m in args.models}
    for (model, fold), run in zip(jobs, runs, strict=True):
        metrics = evaluate(run)
        trained = json.loads((run / "metrics.json").read_text())
        rows[model].append(metrics)
        seconds = [sum(h["seconds"] for h in trained.get("history", []))]
        report.results.append(Result(f"fold {fold}", model, {"run": str(run)}, seconds, metrics))
        print(f"{model} fold {fold}: " + " ".join(f"{k} {metrics.get(k, float('nan')):.4f}"
                                                  for k in SCORES), flush=True)  # fmt: skip
    curves = {m: [fold_curves(args.runs / f"{m}-fold{k}") for k in args.folds] for m in rows}
    for model, folds in rows.items():
        for metrics, cal in zip(folds, calibrated(curves[model]), strict=True):
            metrics.update({f"{k}_calibrated": v for k, v in cal.items()})
    summarise(rows, report)
    report.data["thresholds"] = THRESHOLDS
    report.data["curves (flips)"] = curves
    report.data["label ceiling (pixel F1)"] = ceilings(args.folds)
    print("label ceiling", report.data["label ceiling (pixel F1)"], flush=True)
    report.write(args.out)


if __name__ == "__main__":
    main()
