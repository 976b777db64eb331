"""Fit an attention detector on the first rows of a series and score every row causally.

The usual path::

    fitted = fit_detector(series.values, DetectorConfig(model="transformer"))
    result = detect(fitted, series.values)     # raw (T,), score (T,), attention (T, W)
    flags = result.score >= fitted.threshold

Training uses only the first ``train_rows`` rows (by default NAB's probationary period,
``min(floor(0.15 T), 750)``); the values are standardised with those rows' mean and std. Row
``t`` is scored from the window of rows ``t - W + 1 .. t`` (the first row repeated before the
start), and the raw scores go through the anomaly likelihood (Ahmad et al. 2017) and, with
``suppress_rows > 0``, alert suppression (only the first alert of a burst stays high), both
causal, so every score uses rows ``<= t`` only.

With ``online_every > 0`` the detector keeps learning as the stream goes on (as HTM does in
NAB): after scoring each block of rows it takes ``online_steps`` training steps on windows
ending in the last ``online_history`` rows, all of them already scored.
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from attnkit.apps.anomaly.baselines import anomaly_likelihood, suppress_alerts
from attnkit.apps.anomaly.models import build_detector


@dataclass
class DetectorConfig:
    """One detector's model, training and scoring settings (the ``detector:`` config section)."""

    model: Literal["transformer", "vrae"] = "transformer"
    window: int = 32  # W rows per window
    # transformer forecaster
    d_model: int = 16
    num_heads: int = 2
    d_ff: int = 32
    num_layers: int = 1
    # VRAE
    hidden: int = 16
    latent: int = 4
    eta: float = 0.01  # weight of the attention KL (Pereira & Silveira 2018)
    samples: int = 4  # Monte Carlo draws for the reconstruction probability
    score_rows: int = 1  # the score averages the NLL of the window's last rows (1 .. W)
    # training
    train_fraction: float = 0.15  # rows trained on: min(floor(f T), max_train_rows)
    max_train_rows: int = 750
    steps: int = 300
    batch_size: int = 64
    learning_rate: float = 0.003
    kl_anneal_steps: int = 100  # VRAE: KL weight rises linearly from 0 to 1
    online_every: int = 0  # > 0: after scoring each block of this many rows, learn from them
    online_steps: int = 20  # steps per online update (learning rate / 3)
    online_history: int = 2000  # an update trains on windows ending in the last rows
    seed: int = 0
    # scoring
    likelihood: bool = True  # anomaly likelihood of the raw scores (Ahmad et al. 2017)
    long_window: int = 8640
    short_window: int = 10
    likelihood_of_averages: bool = False  # fit the likelihood to the short-window means (nupic)
    # alert suppression on the score (suppress_alerts): an alert within suppress_rows rows of
    # an earlier one is lowered to suppress_floor; 0 = off. The defaults are in the log-scale
    # likelihood's units (0.5: L = 0.99999, 0.3: L = 0.999), the values Numenta's HTM uses
    suppress_rows: int = 0
    suppress_threshold: float = 0.5
    suppress_floor: float = 0.3
    threshold: float = 0.5  # on the score; replaced by the tuned one after training


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
    losses: list[float] = field(default_factory=list)


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


def _model_options(cfg: DetectorConfig) -> dict:
    if cfg.model == "vrae":
        return {
            "hidden": cfg.hidden,
            "latent": cfg.latent,
            "eta": cfg.eta,
            "score_rows": cfg.score_rows,
        }
    return {
        "d_model": cfg.d_model,
        "num_heads": cfg.num_heads,
        "d_ff": cfg.d_ff,
        "num_layers": cfg.num_layers,
    }


def new_model(cfg: DetectorConfig, channels: int) -> torch.nn.Module:
    """An untrained detector for ``channels`` value columns."""
    return build_detector(cfg.model, channels, **_model_options(cfg))


def fit_detector(
    values: np.ndarray, cfg: DetectorConfig, train_rows: int | None = None
) -> FittedDetector:
    """Train on windows ending in the first ``train_rows`` rows of ``values (T, C)``."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)  # (T, C)
    rows = train_rows_for(len(values), cfg) if train_rows is None else train_rows
    start = time.perf_counter()
    torch.manual_seed(cfg.seed)
    head = values[:rows]
    mean, std = head.mean(axis=0), head.std(axis=0)
    std = np.where(std > 1e-8, std, 1.0)
    windows = sliding_windows((head - mean) / std, cfg.window)  # (rows, W, C)
    model = new_model(cfg, values.shape[1])
    losses = _train(model, windows, cfg, cfg.steps, cfg.learning_rate, cfg.seed)
    model.eval()
    return FittedDetector(
        cfg, model, mean, std, rows, cfg.threshold, time.perf_counter() - start, losses
    )


def _train(model, windows, cfg: DetectorConfig, steps: int, lr: float, seed: int) -> list[float]:
    """``steps`` Adam steps on random batches of ``windows (N, W, C)``; returns the losses."""
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    for step in range(steps):
        idx = torch.randint(len(windows), (min(cfg.batch_size, len(windows)),), generator=generator)
        kl_weight = min(1.0, (step + 1) / max(cfg.kl_anneal_steps, 1))
        loss = model.loss(windows[idx], kl_weight=kl_weight)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimiser.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def _score(model, windows, cfg: DetectorConfig, batch_size: int, need_attention: bool):
    raw, attention = [], []
    for b in range(0, len(windows), batch_size):
        nll, weights = model.score_last(windows[b : b + batch_size], samples=cfg.samples)
        raw.append(nll.numpy())
        if need_attention:
            attention.append(weights.numpy())
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
            _train(model, recent, cfg, cfg.online_steps, cfg.learning_rate / 3, cfg.seed + end)
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
    """``model.safetensors`` + ``detector.json`` (config, standardisation, threshold)."""
    from attnkit.engine.checkpoint import save_model

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_model(fitted.model, directory / "model.safetensors")
    meta = {
        "config": asdict(fitted.config),
        "mean": fitted.mean.tolist(),
        "std": fitted.std.tolist(),
        "train_rows": fitted.train_rows,
        "threshold": fitted.threshold,
    }
    (directory / "detector.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")


def load_detector(directory: str | Path) -> FittedDetector:
    """The inverse of :func:`save_detector`."""
    from attnkit.config import from_dict
    from attnkit.engine.checkpoint import load_model

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
