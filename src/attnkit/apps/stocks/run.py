"""Stock forecasting with alpha_t-RIM and its baselines behind ``attnkit train`` / ``evaluate``
/ ``predict`` / ``report`` (:mod:`attnkit.apps`).

A config (``task: stocks``; see ``configs/stocks-alpha-t-rim.yaml`` and
:mod:`attnkit.apps.stocks.config`) has ``data``, ``model``
(:class:`~attnkit.apps.stocks.model.StockModelConfig`) and ``train`` sections; training is the
engine's (:mod:`attnkit.apps.stocks.training`). A run directory holds ``config.yaml``,
``model.safetensors``, ``metrics.json`` (the test table and the scaling) and ``checkpoints/``::

    attnkit train configs/stocks-alpha-t-rim.yaml -o runs/stocks
    attnkit evaluate runs/stocks --split test
    attnkit predict runs/stocks --csv prices.csv
    attnkit report runs/stocks
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from attnkit.apps.stocks.config import StocksConfig, load_config
from attnkit.apps.stocks.model import StockForecaster
from attnkit.apps.stocks.scoring import format_table, score_split
from attnkit.apps.stocks.training import StocksTask
from attnkit.apps.stocks.windows import Scaling, Windows, input_windows, log_prices
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import Resume, fit

__all__ = ["evaluate_run_dir", "load_config", "open_run", "predict_run", "report_run",
           "train_run"]  # fmt: skip


def train_run(cfg: StocksConfig, run_dir: Path | None, *, resume: Resume = False,
              progress: bool = False) -> str:  # fmt: skip
    """Train ``cfg`` into ``run_dir`` (default ``runs/NAME``); returns the CLI's line."""
    task = StocksTask(cfg)
    out = Path(run_dir) if run_dir is not None else Path("runs") / cfg.name
    return task.summary(fit(task, out, resume=resume, progress=progress))


def train_from_config(config: Path, run_dir: Path | None, *, resume: Resume = False,
                      progress: bool = False, overrides: Sequence[str] = ()) -> str:  # fmt: skip
    """:func:`train_run` of the config file ``config``."""
    return train_run(load_config(config, overrides), run_dir, resume=resume, progress=progress)


@dataclass
class StocksRun:
    """``attnkit.load_run`` of a stocks run: ``run.predict(windows)`` forecasts standardised
    windows, ``run.windows(series)`` cuts a series with the run's scaling."""

    path: Path
    config: StocksConfig
    model: StockForecaster
    scaling: Scaling
    task: str = "stocks"

    def windows(self, series) -> Windows:
        """Every full window of a :class:`PriceSeries` (the run's columns), standardised with
        the training days' statistics; targets beyond the series' end are left out."""
        d = self.config.data
        z = self.scaling.transform(log_prices(series))  # (T, F)
        return input_windows(z, d.window, d.horizon)

    def predict(self, x) -> np.ndarray:
        """Standardised windows ``(N, T, F)`` -> forecast prices ``(N, horizon)``."""
        import torch

        self.model.eval()
        with torch.no_grad():
            z = self.model(torch.as_tensor(np.asarray(x), dtype=torch.float32)).prediction
        return self.scaling.prices(z.numpy())


def open_run(path: str | Path, checkpoint: str = "best") -> StocksRun:
    if checkpoint != "best":
        raise ValueError(f"a stocks run keeps its kept model only, not {checkpoint!r}")
    run = RunDir(path)
    cfg = load_config(run.existing_config())
    metrics = run.read_metrics()
    if "scaling" not in metrics:
        raise ValueError(f"{run.root}: metrics.json has no scaling; did training finish?")
    model = StockForecaster(cfg.model, len(cfg.data.columns), cfg.data.horizon)
    load_model(model, run.model)
    return StocksRun(Path(path), cfg, model.eval(), Scaling.from_dict(metrics["scaling"]))


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """The per-horizon table (the model, persistence, ARIMA) and the Diebold-Mariano tests."""
    from attnkit.apps.stocks.sets import load_sets

    run = open_run(run_dir)
    data = run.config.data
    if data_dir is not None:
        data = replace(data, data_dir=Path(data_dir))
    sets = load_sets(data)
    if split not in sets.windows:
        raise ValueError(f"no {split!r} split; choose one of {', '.join(sets.windows)}")
    scores = score_split(run.model, sets, split, name=run.config.model.kind,
                         arima=run.config.train.arima)  # fmt: skip
    head = f"{run_dir} {split} ({scores['windows']} windows; MAPE in %, R2 on prices)"
    return head + "\n" + format_table(scores)


def predict_run(run_dir: Path, inputs: list[Path], *, output: Path | None = None,
                picture: Path | None = None) -> str:  # fmt: skip
    """Forecasts of every window of one CSV with their attention (:mod:`.predict`)."""
    from attnkit.apps.stocks.predict import predict_csv

    if len(inputs) != 1:
        raise ValueError(f"give one CSV of prices (--csv FILE), got {len(inputs)} inputs")
    return predict_csv(open_run(run_dir), inputs[0], output=output, picture=picture)


def report_run(run_dir: Path, output: Path, *, n_examples: int = 3) -> Path:
    """The HTML report: the table and the attention pictures (:mod:`.report`)."""
    from attnkit.apps.stocks.report import write_report

    return write_report(open_run(run_dir), output)
