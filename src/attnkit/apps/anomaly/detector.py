"""Fit an attention detector on the first rows of a series and score every row causally.

The usual path::

    fitted = fit_detector(series.values, DetectorConfig(model="transformer"))
    result = detect(fitted, series.values)     # raw (T,), score (T,), attention (T, W)
    flags = result.score >= fitted.threshold

Training uses only the first ``train_rows`` rows (by default NAB's probationary period,
``min(floor(0.15 T), 750)``); the values are standardised with those rows' mean and std. It is
one run of the training engine (:class:`~attnkit.apps.anomaly.training.SeriesTask` through
:func:`attnkit.engine.trainer.fit`): given a ``run_dir`` it leaves there a kill-safe, exactly
resumable run that ends as a saved detector (``model.safetensors`` + ``detector.json``);
without one it trains in memory. Row
``t`` is scored from the window of rows ``t - W + 1 .. t`` (the first row repeated before the
start), and the raw scores go through the anomaly likelihood (Ahmad et al. 2017) and, with
``suppress_rows > 0``, alert suppression (only the first alert of a burst stays high), both
causal, so every score uses rows ``<= t`` only.

With ``online_every > 0`` the detector keeps learning as the stream goes on (as HTM does in
NAB): after scoring each block of rows it takes ``online_steps`` training steps on windows
ending in the last ``online_history`` rows, all of them already scored. Each block's update is
an engine run too (:func:`~attnkit.apps.anomaly.training.online_update`), in memory
(``fit(task, None)``: no files), which keeps a second training loop out of the code. An
engine run seeds Python's, NumPy's and torch's global
generators (with ``seed + end row``), so scoring is deterministic, but ``detect`` changes them.
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from attnkit import devices
from attnkit.apps.anomaly.baselines import anomaly_likelihood, suppress_alerts
from attnkit.apps.anomaly.config import DetectorConfig
from attnkit.apps.anomaly.training import (
    SeriesConfig,
    SeriesTask,
    new_model,
    online_update,
    run_task,
    series_settings,
    standardise,
    write_detector_json,
)
from attnkit.config import from_dict
from attnkit.engine.checkpoint import load_model, save_model
from attnkit.engine.trainer import Resume

__all__ = [
    "DetectorConfig",
    "Detection",
    "FittedDetector",
    "detect",
    "fit_detector",
    "load_detector",
    "new_model",
    "save_detector",
    "score_from_raw",
    "sliding_windows",
    "train_rows_for",
]


@dataclass
class FittedDetector:
    """A trained detector with the statistics it standardises by."""

    config: DetectorConfig
    model: torch.nn.Module
    mean: np.ndarray  # (C,)
    std: np.ndarray  # (C,)
    train_rows: int
    threshold: float
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)  # per update run in this call


@dataclass
class Detection:
    """Scores of every row: ``raw (T,)`` model NLL, ``score (T,)`` (likelihood when enabled),
    ``attention (T, W)`` of row ``t``'s query over its window (``None`` unless asked)."""

    raw: np.ndarray
    score: np.ndarray
    attention: np.ndarray | None


def train_rows_for(n_rows: int, cfg: DetectorConfig) -> int:
    """``min(floor(train_fraction T), max_train_rows)``, at least ``window + 1``."""
    rows = min(math.floor(cfg.train_fraction * n_rows), cfg.max_train_rows)
    return max(rows, min(cfg.window + 1, n_rows))


def sliding_windows(x: np.ndarray, window: int) -> torch.Tensor:
    """``(T, C)`` -> ``(T, W, C)``: row ``t``'s window ends at ``t``; the first row is repeated
    before the start so every row has a full window."""
    t = torch.as_tensor(x, dtype=torch.float32)
    padded = torch.cat([t[:1].expand(window - 1, -1), t], dim=0)  # (T + W - 1, C)
    return padded.unfold(0, window, 1).transpose(1, 2)  # (T, W, C)


def fit_detector(
    values: np.ndarray,
    cfg: DetectorConfig,
    train_rows: int | None = None,
    *,
    run_dir: str | Path | None = None,
    resume: Resume = False,
    name: str = "series",
) -> FittedDetector:
    """Train on windows ending in the first ``train_rows`` rows of ``values (T, C)``: one
    :func:`attnkit.engine.trainer.fit` run of a :class:`SeriesTask` into ``run_dir`` (which then
    holds the detector as :func:`load_detector` reads it, and its checkpoints), or in memory
    when ``run_dir`` is None. ``resume``: as the Trainer's."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)  # (T, C)
    rows = train_rows_for(len(values), cfg) if train_rows is None else train_rows
    start = time.perf_counter()
    head = values[:rows]
    mean, std = standardise(head)
    windows = sliding_windows((head - mean) / std, cfg.window)  # (rows, W, C)
    config = SeriesConfig(
        name, cfg, series_settings(cfg), rows, values.shape[1], mean.tolist(), std.tolist()
    )
    task = SeriesTask(windows, config)
    result = run_task(task, run_dir, resume=resume)
    seconds = time.perf_counter() - start
    return FittedDetector(
        cfg, task.model, mean, std, rows, cfg.threshold, seconds, list(result.step_losses)
    )


def _score(model, windows, cfg: DetectorConfig, batch_size: int, need_attention: bool):
    raw, attention, device = [], [], devices.of(model)
    for b in range(0, len(windows), batch_size):
        x = windows[b : b + batch_size].to(device)  # (b, W, C)
        nll, weights = model.score_last(x, samples=cfg.samples)
        raw.append(nll.cpu().numpy())
        if need_attention:
            attention.append(weights.cpu().numpy())
    return raw, attention


def detect(
    fitted: FittedDetector,
    values: np.ndarray,
    *,
    need_attention: bool = False,
    batch_size: int = 2048,
) -> Detection:
    """Score every row of ``values (T, C)`` (causally; see the module docstring)."""
    cfg = fitted.config
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    if values.shape[1] != len(fitted.mean):
        raise ValueError(
            f"the detector was trained on {len(fitted.mean)} value columns, "
            f"this series has {values.shape[1]}"
        )
    windows = sliding_windows((values - fitted.mean) / fitted.std, cfg.window)  # (T, W, C)
    torch.manual_seed(cfg.seed)
    if cfg.online_every <= 0:
        raw, attention = _score(fitted.model, windows, cfg, batch_size, need_attention)
    else:  # continual learning: score a block, then learn from it (rows already scored)
        model = copy.deepcopy(fitted.model)
        cut = fitted.train_rows
        raw, attention = _score(model, windows[:cut], cfg, batch_size, need_attention)
        for start in range(cut, len(windows), cfg.online_every):
            end = min(start + cfg.online_every, len(windows))
            r, a = _score(model, windows[start:end], cfg, batch_size, need_attention)
            raw += r
            attention += a
            recent = windows[max(0, end - cfg.online_history) : end]
            online_update(model, recent, cfg, seed=cfg.seed + end)
    raw_arr = np.concatenate(raw).astype(np.float64)
    raw_arr = np.minimum(raw_arr, 1e6)  # a value far off the training range stays finite
    score = score_from_raw(raw_arr, cfg, fitted.train_rows)
    return Detection(raw_arr, score, np.concatenate(attention) if need_attention else None)


def score_from_raw(raw: np.ndarray, cfg: DetectorConfig, train_rows: int) -> np.ndarray:
    """The score :func:`detect` gives for raw model scores ``raw (T,)``: the anomaly likelihood
    (when ``cfg.likelihood``; the first ``train_rows`` rows score 0.5), then alert suppression
    (when ``cfg.suppress_rows > 0``). Causal: row ``t`` uses ``raw[: t + 1]`` only."""
    score = (
        anomaly_likelihood(
            raw,
            long_window=cfg.long_window,
            short_window=cfg.short_window,
            warmup=train_rows,
            of_averages=cfg.likelihood_of_averages,
        )
        if cfg.likelihood
        else np.asarray(raw, dtype=np.float64)
    )
    return suppress_alerts(
        score, threshold=cfg.suppress_threshold, rows=cfg.suppress_rows, floor=cfg.suppress_floor
    )


def save_detector(fitted: FittedDetector, directory: str | Path) -> None:
    """``model.safetensors`` + ``detector.json`` (config, standardisation, threshold), each
    written atomically, ``detector.json`` last (a directory holding it is complete)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_model(fitted.model, directory / "model.safetensors")
    write_detector_json(
        directory,
        fitted.config,
        fitted.mean.tolist(),
        fitted.std.tolist(),
        fitted.train_rows,
        fitted.threshold,
    )


def load_detector(directory: str | Path) -> FittedDetector:
    """The inverse of :func:`save_detector`."""
    directory = Path(directory)
    path = directory / "detector.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no trained detector here")
    meta = json.loads(path.read_text(encoding="utf-8"))
    cfg = from_dict(DetectorConfig, meta["config"], source=str(path))
    model = new_model(cfg, len(meta["mean"]))
    load_model(model, directory / "model.safetensors")
    model.eval()
    return FittedDetector(
        cfg,
        model,
        np.asarray(meta["mean"]),
        np.asarray(meta["std"]),
        int(meta["train_rows"]),
        float(meta["threshold"]),
    )
