"""The anomaly-detection task behind ``attnkit train`` / ``attnkit evaluate``.

A config (``configs/nab-*.yaml``, ``configs/solar-*.yaml``) names the data (``nab``, ``solar``
or ``csv``) and a :class:`DetectorConfig`. Training fits one detector per series on its first
rows (the NAB probationary period), scores every row causally, picks the detection threshold
that maximises the NAB score of the profile over the training series, and writes::

    RUN_DIR/
      config.yaml          the configuration
      metrics.json         NAB scores (NAB) or point/event F1 and ROC-AUC (solar, csv)
      series/NAME/         each series' detector: model.safetensors + detector.json
      threshold.json       the tuned threshold

Detectors are per stream, as in NAB: ``attnkit detect`` fits a fresh one on a new CSV's first
rows with the run's settings and applies the run's threshold.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

from attnkit.apps.anomaly.detector import DetectorConfig, detect, fit_detector, save_detector
from attnkit.config import load_yaml, save_yaml

log = logging.getLogger(__name__)


@dataclass
class AnomalyData:
    """Which series to train and evaluate on (the ``data:`` section)."""

    source: Literal["nab", "solar", "csv"] = "solar"
    data_dir: str = ""  # NAB: default $ATTNKIT_DATA_DIR/nab, else ../shared/data/nab
    files: list[str] = field(default_factory=list)  # NAB keys (default all 58) or CSV paths
    value_columns: list[str] = field(default_factory=list)  # CSV (default: all but timestamp)
    series: int = 3  # solar: training series (test series use other seeds)
    days: int = 60
    steps_per_day: int = 48
    clean_days: int = 14  # solar: anomaly-free days first (keep the training rows inside them)
    seed: int = 0


@dataclass
class AnomalyConfig:
    """An anomaly-detection experiment."""

    task: str = "anomaly-detection"
    name: str = "anomaly"
    profile: Literal["standard", "reward_low_FP_rate", "reward_low_FN_rate"] = "standard"
    data: AnomalyData = field(default_factory=AnomalyData)
    detector: DetectorConfig = field(default_factory=DetectorConfig)


def nab_dir(data: AnomalyData, data_dir: str | None = None) -> Path:
    """Where the NAB corpus is: ``data_dir`` argument, config, $ATTNKIT_DATA_DIR/nab, or
    ``../shared/data/nab`` relative to the working directory."""
    for candidate in (data_dir, data.data_dir):
        if candidate:
            path = Path(candidate)
            return path / "nab" if (path / "nab" / "labels").is_dir() else path
    env = os.environ.get("ATTNKIT_DATA_DIR")
    return Path(env) / "nab" if env else Path("..") / "shared" / "data" / "nab"


def load_config(config: str | Path) -> AnomalyConfig:
    """Read an anomaly-detection YAML config (the :mod:`attnkit.apps` interface)."""
    return load_yaml(AnomalyConfig, config)


def load_series(cfg: AnomalyConfig, split: str = "train", data_dir: str | None = None):
    """The series of ``split``: NAB and CSV have one set; solar's ``test`` uses seeds 1000+."""
    from attnkit.apps.anomaly.solar import generate_solar
    from attnkit.apps.anomaly.timeseries import load_nab, read_csv

    data = cfg.data
    if data.source == "nab":
        return load_nab(nab_dir(data, data_dir), data.files or None)
    if data.source == "csv":
        if not data.files:
            raise ValueError("data.files: name at least one CSV for source 'csv'")
        return [read_csv(f, value_columns=data.value_columns or None) for f in data.files]
    base = data.seed + (1000 if split == "test" else 0)
    return [
        generate_solar(data.days, data.steps_per_day, clean_days=data.clean_days, seed=base + i)
        for i in range(data.series)
    ]


def run_series(
    series_list,
    detector: DetectorConfig,
    *,
    need_attention: bool = False,
    save_dir: Path | None = None,
    progress: bool = False,
):
    """Fit and score each series; returns ``[(series, fitted, detection)]``."""
    out = []
    for i, series in enumerate(series_list):
        fitted = fit_detector(series.values, detector)
        detection = detect(fitted, series.values, need_attention=need_attention)
        if save_dir is not None:
            save_detector(fitted, save_dir / series.name.replace("/", "__"))
        if progress or log.isEnabledFor(logging.INFO):
            log.info(
                "%d/%d %s: fitted in %.1f s", i + 1, len(series_list), series.name, fitted.seconds
            )
        out.append((series, fitted, detection))
    return out


def measure(results, profile: str, threshold: float | None = None) -> dict:
    """NAB score of the profile (threshold optimised when ``None``), and point-wise / event-wise
    F1 and ROC-AUC after each series' training rows."""
    from attnkit.apps.anomaly.nab import eventwise_scores, nab_score, pointwise_scores

    files = [(d.score, s.windows) for s, _, d in results]
    nab = nab_score(files, profile, threshold)
    metrics = {
        "nab": {
            "profile": profile,
            "score": nab.score,
            "raw": nab.raw,
            "tp": nab.tp,
            "fn": nab.fn,
            "fp": nab.fp,
        },
        "threshold": nab.threshold,
    }
    labels = np.concatenate([s.labels()[f.train_rows :] for s, f, _ in results])
    scores = np.concatenate([d.score[f.train_rows :] for _, f, d in results])
    if labels.any():
        metrics["pointwise"] = pointwise_scores(labels, scores, nab.threshold)
        found = [
            eventwise_scores(
                [(a - f.train_rows, b - f.train_rows) for a, b in s.windows if a >= f.train_rows],
                d.score[f.train_rows :],
                nab.threshold,
            )
            for s, f, d in results
        ]
        metrics["eventwise_f1_mean"] = float(np.mean([e["f1"] for e in found]))
    return metrics


def train_from_config(
    config: Path, run_dir: Path | None, *, resume: bool = False, progress: bool = False
) -> str:
    """Fit per-series detectors, tune the threshold, write the run (see the module docstring).
    ``resume`` is accepted for the common interface; fitting restarts (each fit takes seconds)."""
    cfg = load_yaml(AnomalyConfig, config)
    out = Path(run_dir or Path("runs") / cfg.name)
    out.mkdir(parents=True, exist_ok=True)
    save_yaml(cfg, out / "config.yaml")
    start = time.perf_counter()
    results = run_series(
        load_series(cfg, "train"), cfg.detector, save_dir=out / "series", progress=progress
    )
    metrics = measure(results, cfg.profile)
    metrics["seconds"] = time.perf_counter() - start
    (out / "threshold.json").write_text(json.dumps({"threshold": metrics["threshold"]}))
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    return f"{out}: {_summary(metrics)} ({metrics['seconds']:.0f} s)"


def _summary(metrics: dict) -> str:
    text = f"NAB {metrics['nab']['profile']} {metrics['nab']['score']:.1f}"
    if "pointwise" in metrics:
        p = metrics["pointwise"]
        text += (
            f", point F1 {p['f1']:.3f}, ROC-AUC {p['roc_auc']:.3f}, "
            f"event F1 {metrics['eventwise_f1_mean']:.3f}"
        )
    return text + f", threshold {metrics['threshold']:.4g}"


def load_run_config(run_dir: Path) -> tuple[AnomalyConfig, float]:
    """The run's config and its tuned threshold."""
    cfg = load_yaml(AnomalyConfig, run_dir / "config.yaml")
    path = run_dir / "threshold.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not a trained anomaly run (run attnkit train first)")
    return cfg, float(json.loads(path.read_text())["threshold"])


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """Score the run's detector settings on ``split`` with the run's threshold (solar ``test``:
    new series; NAB and CSV have one set, so ``split`` changes nothing there)."""
    cfg, threshold = load_run_config(Path(run_dir))
    detector = replace(cfg.detector, threshold=threshold)
    results = run_series(load_series(cfg, split, data_dir), detector)
    metrics = measure(results, cfg.profile, threshold)
    return f"{run_dir} {split}: {_summary(metrics)}"
