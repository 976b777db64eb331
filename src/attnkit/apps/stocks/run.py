"""A trained stocks run as ``attnkit.load_run`` gives it: the kept forecaster and the scaling of
its training days (``metrics.json`` holds it), to forecast new windows.

A run directory holds ``config.yaml``, ``model.safetensors``, ``metrics.json`` (the test table
and the scaling) and ``checkpoints/``::

    attnkit train configs/stocks-alpha-t-rim.yaml -o runs/stocks
    attnkit evaluate runs/stocks --split test
    attnkit predict runs/stocks --csv prices.csv
    attnkit report runs/stocks
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnkit import devices
from attnkit.apps.stocks.config import StocksConfig, load_config
from attnkit.apps.stocks.model import StockForecaster
from attnkit.apps.stocks.ranges import feature_labels, range_notes
from attnkit.apps.stocks.windows import Scaling, Windows, input_windows, log_prices
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir

log = logging.getLogger(__name__)


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

    def outside(self, x) -> list[str]:
        """One line per feature of the standardised windows ``x (N, T, F)`` that leaves the
        training range, naming it and how far (:func:`~.ranges.range_notes`); ``[]`` where
        none does or the run kept no range."""
        level = self.config.model.predict == "level"
        return range_notes(self.scaling, x, feature_labels(self.config.data), level)

    def predict(self, x, warn: bool = True) -> np.ndarray:
        """Standardised windows ``(N, T, F)`` -> forecast prices ``(N, horizon)``; each
        feature outside the training range is a ``logging`` warning (:meth:`outside`) unless
        ``warn`` is false."""
        import torch

        for note in self.outside(x) if warn else []:
            log.warning("%s", note)

        self.model.eval()
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(x), dtype=torch.float32, device=devices.of(self.model))
            z = self.model(x).prediction  # (N, horizon), on the model's device
        return self.scaling.prices(z.cpu().numpy())


def open_stocks_run(path: str | Path) -> StocksRun:
    """The run at ``path``: its config, kept model and scaling (a run of another kind is
    refused, named)."""
    from attnkit.apps import require_kind

    require_kind(path, "stocks")
    run = RunDir(path)
    cfg = load_config(run.existing_config())
    metrics = run.read_metrics()
    if "scaling" not in metrics:
        raise ValueError(f"{run.root}: metrics.json has no scaling; did training finish?")
    model = StockForecaster(cfg.model, len(cfg.data.columns), cfg.data.horizon)
    load_model(model, run.model)
    return StocksRun(Path(path), cfg, model.eval(), Scaling.from_dict(metrics["scaling"]))
