"""The solar part of ``benchmarks/nab.py``: attention mass inside injected anomaly windows of
generated solar series vs the windows' share of the input, and F1 / ROC-AUC."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from attnkit.apps.anomaly.detector import DetectorConfig, detect, fit_detector
from attnkit.apps.anomaly.nab import eventwise_scores, nab_score, pointwise_scores
from attnkit.apps.anomaly.solar import generate_solar
from attnkit.apps.anomaly.views import explain, mass_inside, plot_explained


def solar_config(cfg: DetectorConfig) -> DetectorConfig:
    """``cfg`` scored as recorded before the NAB post-processing (point-wise measures count
    every row of a window, which alert suppression is not meant for)."""
    return replace(
        cfg, window=24, train_fraction=0.2, likelihood_of_averages=False, suppress_rows=0
    )


def fit_series(cfg: DetectorConfig, n_series: int) -> tuple[list, list[float], dict]:
    """Fit and score each generated series: ``(series, fitted, detection)`` per series, the
    seconds each took, and the attention mass inside / share of every anomalous row."""
    results, seconds, rows = [], [], {"mass": [], "share": [], "by_kind": {}}
    for seed in range(n_series):
        s = generate_solar(days=60, steps_per_day=24, seed=1000 + seed)
        start = time.perf_counter()
        fitted = fit_detector(s.values, cfg)
        d = detect(fitted, s.values, need_attention=True)
        seconds.append(time.perf_counter() - start)
        results.append((s, fitted, d))
        for (first, last), kind in zip(s.windows, s.kinds, strict=True):
            # every row inside the window whose input already holds an anomalous row
            # (the forecaster's input ends just before the row it scores)
            lo = first + 1 if cfg.model == "transformer" else first
            for t in range(lo, last + 1):
                m, share = mass_inside(d.attention[t], t, (first, last))
                rows["mass"].append(m)
                rows["share"].append(share)
                rows["by_kind"].setdefault(kind, []).append((m, share))
    return results, seconds, rows


def _detections(name: str, results: list, threshold: float, figure: Path | None) -> tuple:
    """(mass inside, share) per labelled detection, at its first and last flagged row;
    ``figure``: draw the first detected fault there (then the figure left to draw is None)."""
    detections = {"first": [], "last": []}
    for s, fitted, d in results:
        for at, found in detections.items():
            for a in explain(s, d, threshold, start=fitted.train_rows, at=at):
                if not a.labelled:
                    continue
                found.append((a.mass_inside, a.share))
                kind = s.kinds[s.windows.index(a.span)]
                if figure is not None and at == "last" and kind == "fault":
                    plot_explained(s, d, a, figure, threshold)
                    print(f"figure: {figure} ({name}, {s.name}, {kind})", file=sys.stderr)
                    figure = None
    return detections, figure


def _means(pairs: list) -> dict:
    return {
        "mass_inside": float(np.mean([m for m, _ in pairs])) if pairs else None,
        "share": float(np.mean([x for _, x in pairs])) if pairs else None,
    }


def run_solar(configs: dict[str, DetectorConfig], n_series: int, figure: Path | None = None):
    """Per detector: the attention figures, and the seconds to fit and score each series
    (``seconds_per_series``); ``figure``: draw the first detected fault (its last flagged
    row) there."""
    out = {}
    for name, base in configs.items():
        results, seconds, rows = fit_series(solar_config(base), n_series)
        files = [(d.score, s.windows) for s, _, d in results]
        threshold = nab_score(files, "standard").threshold
        detections, figure = _detections(name, results, threshold, figure)
        labels = np.concatenate([s.labels()[f.train_rows :] for s, f, _ in results])
        scores = np.concatenate([d.score[f.train_rows :] for _, f, d in results])
        events = [eventwise_scores(s.windows, d.score, threshold) for s, _, d in results]
        out[name] = {
            "rows_in_windows": {
                "mass_inside": float(np.mean(rows["mass"])),
                "share": float(np.mean(rows["share"])),
                "n": len(rows["mass"]),
            },
            "by_kind": {k: _means(v) for k, v in rows["by_kind"].items()},
            "at_detections": {at: _means(v) | {"n": len(v)} for at, v in detections.items()},
            "pointwise": pointwise_scores(labels, scores, threshold),
            "eventwise_f1": float(np.mean([e["f1"] for e in events])),
            "threshold": threshold,
            "seconds_per_series": seconds,
        }
    return out


def print_solar(solar: dict) -> None:
    print("solar (generated): attention mass inside the injected window vs its share of input")
    for name, row in solar.items():
        r, p = row["rows_in_windows"], row["pointwise"]
        det = "; ".join(
            f"at {at} flagged rows {d['mass_inside']:.3f} vs {d['share']:.3f} (n={d['n']})"
            if d["n"]
            else f"at {at}: no detection"
            for at, d in row["at_detections"].items()
        )
        print(
            f"  {name:12s} rows in windows {r['mass_inside']:.3f} vs {r['share']:.3f} "
            f"(n={r['n']}); {det}; point F1 {p['f1']:.3f}, ROC-AUC "
            f"{p['roc_auc']:.3f}, event F1 {row['eventwise_f1']:.3f}"
        )
