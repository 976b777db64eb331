"""The anomaly-detection experiment: one detector per series, a threshold tuned over them.

A config (``configs/nab-*.yaml``, ``configs/solar-*.yaml``) names the data (``nab``, ``solar``
or ``csv``) and a :class:`DetectorConfig`. Training (:func:`train_experiment`, what
``attnkit train`` runs) fits one detector per series on its first rows (the NAB probationary
period), each an engine run (:mod:`attnkit.apps.anomaly.training`), scores every row causally,
picks the detection threshold that maximises the NAB score of the profile over the training
series, and writes::

    RUN_DIR/
      config.yaml          the configuration
      series/NAME/         each series' engine run, ending as its detector: model.safetensors +
                           detector.json (written last), config.yaml, metrics.json, checkpoints/
      threshold.json       the tuned threshold
      metrics.json         labelled series: the NAB score, point/event F1 and ROC-AUC; series
                           without labelled windows (a user's CSV): the rows scored and
                           flagged at ``detector.threshold`` (:func:`unlabelled`)

The threshold is tuned by NAB's sweep where the series have labelled anomaly windows (NAB,
solar); without labels there is nothing to tune it on, and ``detector.threshold`` is used.

A killed ``attnkit train`` continues with ``--resume``: series with a ``detector.json`` are
loaded, not refitted; the interrupted one continues from its last checkpoint (bit for bit, as
if never stopped; ``detector.checkpoint_every`` sets how often one is written); the rest are
fitted. A first run that failed or was killed is continued by the same command with the same
config (:mod:`attnkit.apps.anomaly.run_start`); one that failed before any series had weights
is no run: training into it again starts afresh. Detectors are per stream, as in NAB:
``attnkit anomaly detect`` fits a fresh one on a new CSV's first rows with the run's settings
and applies the run's threshold.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from attnkit.apps.anomaly.config import AnomalyConfig, AnomalyData, DetectorConfig
from attnkit.apps.anomaly.detector import detect, fit_detector, load_detector
from attnkit.apps.anomaly.run_start import start_or_resume
from attnkit.datadir import default_data_dir
from attnkit.engine import snapshots
from attnkit.engine.checkpoint import CheckpointError, write_text
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import Resume

__all__ = ["headline", "load_series", "measure", "run_series", "score_split", "train_experiment"]
log = logging.getLogger(__name__)


def nab_dir(data: AnomalyData, data_dir: str | None = None) -> Path:
    """Where the NAB corpus is: ``data_dir`` argument, config, $ATTNKIT_DATA_DIR/nab, or
    ``../shared/data/nab`` relative to the working directory."""
    for candidate in (data_dir, data.data_dir):
        if candidate:
            path = Path(candidate)
            return path / "nab" if (path / "nab" / "labels").is_dir() else path
    return default_data_dir() / "nab"


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
    resume: bool = False,
    progress: bool = False,
):
    """Fit (or, resuming, load) and score each series; returns ``[(series, fitted,
    detection)]``. With ``save_dir`` each detector is an engine run in ``save_dir/NAME``."""
    out = []
    bar = tqdm(series_list, desc="series", unit="series", disable=not progress, leave=False)
    for i, series in enumerate(bar):
        fitted, how = _fit_or_load(series, detector, save_dir, resume)
        detection = detect(fitted, series.values, need_attention=need_attention)
        log.info(
            "%d/%d %s: %s in %.1f s", i + 1, len(series_list), series.name, how, fitted.seconds
        )
        out.append((series, fitted, detection))
    return out


def _fit_or_load(series, detector: DetectorConfig, save_dir: Path | None, resume: bool):
    """The series' detector and how it was got (``fitted``, ``resumed`` or ``loaded``)."""
    if save_dir is None:
        return fit_detector(series.values, detector), "fitted"
    directory = save_dir / series.name.replace("/", "__")
    if resume and (directory / "detector.json").is_file():
        return load_detector(directory), "loaded"
    how = "fitted"
    if resume and directory.exists():
        try:
            found = snapshots.latest(RunDir(directory))
        except CheckpointError as err:
            log.warning("%s: %s; fitting it again", directory, err)
            found = None
        if found is None:  # killed before its first complete checkpoint: start it again
            shutil.rmtree(directory)
        else:
            how = "resumed"
    fitted = fit_detector(
        series.values, detector, run_dir=directory, resume=how == "resumed", name=series.name
    )
    return fitted, how


def measure(
    results, profile: str, threshold: float | None = None, *, configured: float = 0.5
) -> dict:
    """NAB score of the profile (threshold optimised when ``None``), and point-wise / event-wise
    F1 and ROC-AUC after each series' training rows. Series without any labelled window (a
    user's own CSV) have no NAB score: they are measured by :func:`unlabelled` at
    ``threshold``, or at ``configured`` (``detector.threshold``) when it is ``None``."""
    from attnkit.apps.anomaly.nab import eventwise_scores, nab_score, pointwise_scores

    if not any(s.windows for s, _, _ in results):
        return unlabelled(results, configured if threshold is None else threshold)
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


UNLABELLED = (
    "no labelled anomaly windows: no NAB score, F1 or ROC-AUC (they need labels); the "
    "threshold is detector.threshold, not tuned"
)


def unlabelled(results, threshold: float) -> dict:
    """What can be said of series without labels at ``threshold``: the rows scored (after each
    series' training rows), the rows flagged (``score >= threshold``) and the anomalies (runs
    of flagged rows)."""
    scored = flagged = anomalies = 0
    for _, fitted, detection in results:
        hit = detection.score[fitted.train_rows :] >= threshold
        scored += len(hit)
        flagged += int(hit.sum())
        anomalies += int(np.count_nonzero(np.diff(np.concatenate([[0], hit.astype(int)])) == 1))
    return {
        "labelled": False,
        "note": UNLABELLED,
        "threshold": float(threshold),
        "threshold_from": "detector.threshold",
        "scored_rows": scored,
        "flagged_rows": flagged,
        "anomalies": anomalies,
    }


def _warn_unlabelled(detector: DetectorConfig, results, threshold: float) -> None:
    """Say in the log that the threshold was not tuned; with the likelihood off, that
    ``detector.threshold`` is on the raw score's scale, and where the training rows lie."""
    log.warning("%s: %.4g", UNLABELLED, threshold)
    if not detector.likelihood:
        raw = np.concatenate([d.raw[: f.train_rows] for _, f, d in results])
        log.warning(
            "detector.likelihood is off: set detector.threshold on the raw score's scale "
            "(the training rows' 99th percentile is %.4g)",
            float(np.quantile(raw, 0.99)),
        )


def train_experiment(
    cfg: AnomalyConfig, out: Path, *, resume: Resume = False, progress: bool = False
) -> dict:
    """Fit per-series detectors, tune the threshold, write the run (see the module docstring)
    into ``out``. ``resume``: continue a killed run (True), or ``"auto"``: continue if ``out``
    holds one. Returns the run's metrics (as ``metrics.json``)."""
    resume = start_or_resume(cfg, out, resume)
    start = time.perf_counter()
    results = run_series(
        load_series(cfg, "train"),
        cfg.detector,
        save_dir=out / "series",
        resume=resume,
        progress=progress,
    )
    metrics = measure(results, cfg.profile, configured=cfg.detector.threshold)
    if not metrics.get("labelled", True):
        _warn_unlabelled(cfg.detector, results, metrics["threshold"])
    metrics["seconds"] = time.perf_counter() - start
    write_text(out / "threshold.json", json.dumps({"threshold": metrics["threshold"]}))
    RunDir(out).write_metrics(metrics)
    return metrics


def headline(metrics: dict) -> dict:
    """The scores people read first, under plain names: the NAB score of the profile, and
    where the series are labelled point F1, ROC-AUC and event F1; then the threshold. Without
    labels: ``labels none``, the rows scored and flagged, the anomalies and the threshold."""
    if not metrics.get("labelled", True):
        keys = ("scored_rows", "flagged_rows", "anomalies", "threshold")
        return {"labels": "none", **{k: metrics[k] for k in keys}}
    nab = metrics["nab"]
    out = {"nab_profile": nab["profile"], "nab_score": nab["score"]}
    if "pointwise" in metrics:
        point = metrics["pointwise"]
        out.update(
            point_f1=point["f1"], roc_auc=point["roc_auc"], event_f1=metrics["eventwise_f1_mean"]
        )
    out["threshold"] = metrics["threshold"]
    return out


def score_split(cfg: AnomalyConfig, threshold: float, split: str, data_dir: str | None):
    """The run's detector settings on ``split`` with the run's ``threshold`` (solar ``test``:
    new series; NAB and CSV have one set, so ``split`` changes nothing there): the metrics (as
    :func:`measure`) and the number of series."""
    detector = replace(cfg.detector, threshold=threshold)
    series = load_series(cfg, split, data_dir)
    return measure(run_series(series, detector), cfg.profile, threshold), len(series)
