"""NAB scores of the attention detectors beside NAB's windowed-Gaussian baseline, measured in the
same run, and attention mass inside injected anomaly windows on generated solar series.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/nab.py                     # everything
    python benchmarks/nab.py --detectors transformer --files realKnownCause   # a subset

Every detector is fitted per series on the NAB probationary period only (the first
min(15%, 750) rows), scores each row from rows <= t, and gets one threshold per profile chosen
by NAB's sweep over the corpus (as NAB does for every detector). The transformers' raw scores
go through Numenta's anomaly likelihood and alert suppression (``SCORING``; chosen on NAB, the
grid is in ``--postprocess-grid``). Prints a table and writes benchmarks/results/nab[-TAG].json.

    python benchmarks/nab.py --detectors transformer --cache /tmp/nab-cache --skip-solar \
        --postprocess-grid --tag postprocess
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

from attnkit.apps.anomaly.baselines import log_likelihood, suppress_alerts, windowed_gaussian
from attnkit.apps.anomaly.detector import (
    DetectorConfig,
    detect,
    fit_detector,
    score_from_raw,
    train_rows_for,
)
from attnkit.apps.anomaly.nab import PROFILES, nab_score
from attnkit.apps.anomaly.timeseries import load_nab

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too
from benchmarks.nab_solar import print_solar, run_solar  # noqa: E402
from benchmarks.suites.report import Report, Result, script_command  # noqa: E402

PUBLISHED = {
    "windowed_gaussian": {"standard": 39.6, "reward_low_FP_rate": 20.9, "reward_low_FN_rate": 47.4},
    "numenta_htm": {"standard": 70.5},
    "random_cut_forest": {"standard": 51.7},
    "random": {"standard": 11.0},
}

# how the transformer's raw scores become alerts (chosen on NAB itself, see POSTPROCESS_GRID):
# Numenta's likelihood (fitted to the short-window means) and alert suppression
SCORING = {"likelihood_of_averages": True, "suppress_rows": 24, "suppress_threshold": 0.8}
# scoring settings that leave the model (and its cached raw scores) unchanged
SCORING_ONLY = ("likelihood_of_averages", "suppress_rows", "suppress_threshold", "suppress_floor")
# settings that change how a fit is run (checkpoints), not the model it ends with
NOT_MODEL = ("checkpoint_every",)

# what every detector shares: the input window, the batch and how raw scores become alerts
# (the VRAE takes the transformer's alert settings unchanged)
COMMON = {"window": 24, "batch_size": 32, **SCORING}
TRANSFORMER = {"model": "transformer", "steps": 80, **COMMON}
DETECTORS = {
    "transformer": DetectorConfig(**TRANSFORMER),
    "transformer-online": DetectorConfig(**TRANSFORMER, online_every=500, online_steps=20),
    "vrae": DetectorConfig(model="vrae", steps=150, eta=0.01, samples=2, score_rows=24, **COMMON),
}


# --postprocess-grid: every combination is scored and recorded (tuning on NAB, reported apart):
# the likelihood's short window and sigma (raw scores as the paper, or short-window means as
# nupic), and alert suppression off, Numenta's filter (L >= 0.99999, next row only), or ours
POSTPROCESS_GRID = {
    "short_window": (1, 3, 10),
    "likelihood_of_averages": (False, True),
    "suppress": ((0, 0.5), (1, 0.5), (24, 0.8)),  # (suppress_rows, suppress_threshold)
}


def grid_variants() -> list[tuple[str, dict]]:
    out = []
    g = POSTPROCESS_GRID
    for w, avg, (rows, thr) in itertools.product(
        g["short_window"], g["likelihood_of_averages"], g["suppress"]
    ):
        label = f"short window {w}, sigma of {'means' if avg else 'raw'}, " + (
            f"suppress {rows} rows >= {thr}" if rows else "no suppression"
        )
        overrides = {
            "likelihood": True,
            "short_window": w,
            "likelihood_of_averages": avg,
            "suppress_rows": rows,
            "suppress_threshold": thr,
        }
        out.append((label, overrides))
    return out


def nab_rows(series, scores) -> dict:
    files = [(s, x.windows) for s, x in zip(scores, series, strict=True)]
    return {p: asdict(nab_score(files, p)) for p in PROFILES}


def cached_raw(name: str, series, cache: Path | None) -> np.ndarray:
    """Fit and score one series: the raw scores (model NLL). With ``cache`` they are kept and
    reused by a rerun with the same model settings (so an interrupted run can continue)."""
    cfg = DETECTORS[name]
    # the settings as first keyed (a dict: DetectorConfig refuses a zero window)
    model_only = {**asdict(cfg), "likelihood": False, "long_window": 0, "short_window": 0}
    for k in (*SCORING_ONLY, *NOT_MODEL):  # added later; left out so cached scores stay valid
        del model_only[k]
    key = hashlib.sha1(json.dumps(model_only, sort_keys=True).encode()).hexdigest()[:10]
    path = cache / f"{name}-{key}" / (series.name.replace("/", "__") + ".npy") if cache else None
    if path is not None and path.is_file():
        raw = np.load(path)
    else:
        raw = detect(fit_detector(series.values, cfg), series.values).raw
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, raw)
    return raw


def score_of(raw: np.ndarray, series, cfg: DetectorConfig) -> np.ndarray:
    """The score :func:`detect` gives for the cached raw scores ``raw``."""
    return score_from_raw(raw, cfg, train_rows_for(len(series), cfg))


def run_nab(
    root: Path,
    files: list[str] | None,
    detectors: list[str],
    cache: Path | None = None,
    sweep: tuple[int, ...] = (),
    grid: bool = False,
) -> dict:
    """NAB for the windowed Gaussian and each detector; ``sweep``: also score each detector
    with these anomaly-likelihood short windows; ``grid``: with every setting of
    :data:`POSTPROCESS_GRID` (both chosen on NAB itself, so reported apart). The windowed
    Gaussian is also scored with each detector's alert suppression (on NAB's log scale)."""
    series = load_nab(root, files)
    out = {
        "files": len(series),
        "rows": int(sum(len(s) for s in series)),
        "windows": int(sum(len(s.windows) for s in series)),
    }
    start = time.perf_counter()
    wg = [windowed_gaussian(s.values[:, 0]) for s in series]
    out["windowed_gaussian"] = nab_rows(series, wg) | {"seconds": time.perf_counter() - start}
    suppressions = {
        (c.suppress_rows, c.suppress_threshold, c.suppress_floor)
        for c in (DETECTORS[n] for n in detectors)
        if c.suppress_rows > 0
    }
    for rows, thr, floor in sorted(suppressions):
        start = time.perf_counter()
        variant = [
            suppress_alerts(log_likelihood(x), threshold=thr, rows=rows, floor=floor) for x in wg
        ]
        key = f"windowed_gaussian (suppress {rows} rows >= {thr})"
        out[key] = nab_rows(series, variant) | {"seconds": time.perf_counter() - start}
    for name in detectors:
        start = time.perf_counter()
        cfg = DETECTORS[name]
        raws = []
        for i, s in enumerate(series):
            raws.append(cached_raw(name, s, cache))
            print(f"  {name} {i + 1}/{len(series)} {s.name}", file=sys.stderr, flush=True)
        scores = [score_of(r, s, cfg) for r, s in zip(raws, series, strict=True)]
        out[name] = nab_rows(series, scores) | {"seconds": time.perf_counter() - start}
        variants = [(f"short window {k}", {"short_window": k}) for k in sweep]
        variants += grid_variants() if grid else []
        for label, overrides in variants:
            start, c = time.perf_counter(), replace(cfg, **overrides)
            variant = [score_of(r, s, c) for r, s in zip(raws, series, strict=True)]
            out[f"{name} ({label})"] = nab_rows(series, variant) | {
                "seconds": time.perf_counter() - start
            }
    return out


def _arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("ATTNKIT_DATA_DIR", "../shared/data"))
    parser.add_argument("--detectors", default="transformer,vrae")
    parser.add_argument("--files", default="", help="a NAB category or comma-separated keys")
    parser.add_argument("--solar-series", type=int, default=3)
    parser.add_argument("--skip-nab", action="store_true")
    parser.add_argument("--tag", default="")
    parser.add_argument(
        "--likelihood-sweep", default="", help="also score NAB with these short windows (1,3)"
    )
    parser.add_argument(
        "--postprocess-grid",
        action="store_true",
        help="also score NAB with every setting of POSTPROCESS_GRID (likelihood, suppression)",
    )
    parser.add_argument("--skip-solar", action="store_true")
    parser.add_argument(
        "--cache", type=Path, default=None, help="keep each series' scores here and reuse them"
    )
    parser.add_argument("--figure", type=Path, default=Path("docs/anomaly-attention.png"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    torch.set_num_threads(1)
    report = Report("nab", script_command("benchmarks/nab.py", argv), vars(args))
    root = Path(args.data_dir) / "nab"
    names = [d for d in args.detectors.split(",") if d]
    files = None
    if args.files:
        keys = json.loads((root / "labels" / "combined_windows.json").read_text())
        wanted = args.files.split(",")
        files = sorted(k for k in keys if any(k == w or k.startswith(w + "/") for w in wanted))
    start = time.perf_counter()
    result = {"detectors": {n: asdict(DETECTORS[n]) for n in names}, "published": PUBLISHED}
    if not args.skip_nab:
        sweep = tuple(int(k) for k in args.likelihood_sweep.split(",") if k)
        result["nab"] = run_nab(root, files, names, args.cache, sweep, args.postprocess_grid)
        if args.postprocess_grid:
            result["postprocess_grid"] = POSTPROCESS_GRID
    if not args.skip_solar:
        configs = {n: DETECTORS[n] for n in names}
        result["solar"] = run_solar(configs, args.solar_series, args.figure)
    result["seconds"] = time.perf_counter() - start
    print_table(result)
    out = Path("benchmarks/results") / f"nab{'-' + args.tag if args.tag else ''}.json"
    nab_report(report, result).write(out)
    print(f"written to {out} ({result['seconds']:.0f} s)")


def nab_report(report: Report, result: dict) -> Report:
    """``result`` (``main``'s figures) in ``report``: one ``nab`` result per detector and
    variant (its scores per profile as metrics, the time over the corpus), one ``solar`` result
    per detector (its attention figures, the time per series); the rest as ``data``."""
    nab = result.get("nab", {})
    for key, row in nab.items():
        if isinstance(row, dict):
            base, _, label = key.partition(" (")
            params = {"detector": base, "variant": label[:-1] or None, "files": nab["files"]}
            metrics = {p: row[p] for p in PROFILES}
            report.results.append(Result("nab", key, params, [row["seconds"]], metrics))
    for name, row in result.get("solar", {}).items():
        times = row["seconds_per_series"]
        metrics = {k: v for k, v in row.items() if k != "seconds_per_series"}
        report.results.append(Result("solar", name, {"series": len(times)}, times, metrics))
    report.data = {k: v for k, v in result.items() if k not in ("nab", "solar")}
    if nab:
        report.data["nab_corpus"] = {k: nab[k] for k in ("files", "rows", "windows")}
        report.notes.append(
            "nab: one time per row, over the whole corpus (fit and score); a variant's time "
            "is its rescoring of the detector's raw scores only"
        )
    return report


def print_table(result: dict) -> None:
    if "nab" in result:
        nab = result["nab"]
        print(f"NAB: {nab['files']} files, {nab['rows']} rows, {nab['windows']} windows")
        print(
            f"{'detector':72s} {'standard':>9s} {'low FP':>9s} {'low FN':>9s} "
            f"{'TP':>4s} {'FN':>4s} {'FP':>5s} {'seconds':>8s}"
        )
        for name, row in nab.items():
            if not isinstance(row, dict):
                continue
            std = row["standard"]
            print(
                f"{name[:72]:72s} {std['score']:9.1f} {row['reward_low_FP_rate']['score']:9.1f} "
                f"{row['reward_low_FN_rate']['score']:9.1f} {std['tp']:4d} {std['fn']:4d} "
                f"{std['fp']:5d} {row['seconds']:8.0f}"
            )
        print(
            "published: windowed Gaussian 39.6 / 20.9 / 47.4; Numenta HTM 70.5; "
            "Random Cut Forest 51.7; random 11.0 (standard)"
        )
    if "solar" in result:
        print_solar(result["solar"])


if __name__ == "__main__":
    main()
