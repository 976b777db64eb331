"""Stock forecasting as an engine task: shuffled windows, MSE on standardised log prices (the
paper's loss), the best epoch by validation loss, then the per-horizon table on the test split.

The engine's :class:`~attnkit.engine.trainer.Trainer` runs the loop (Adam, kill-safe checkpoints,
exact resume, the best epoch's weights loaded back at the end); :class:`StocksTask` says only
how to build the forecaster, batch the windows, score a batch and validate.
:meth:`StocksTask.finish` returns the test table (the model, persistence and ARIMA; MAPE and R²
per horizon; Diebold-Mariano against persistence) and the scaling, which the engine writes into
``metrics.json``::

    import attnkit
    run = attnkit.train("configs/stocks-alpha-t-rim.yaml", "runs/stocks")

    from attnkit.engine.trainer import fit            # with folds of one's own
    fit(StocksTask(cfg, sets), "runs/fold-1")
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F

from attnkit.apps.stocks.config import StocksConfig
from attnkit.apps.stocks.model import StockForecaster
from attnkit.apps.stocks.scoring import forecast, score_split
from attnkit.apps.stocks.sets import StockSets, load_sets
from attnkit.engine.results import TrainResult
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task

log = logging.getLogger(__name__)


class StocksTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a stocks run; ``sets`` may be given (the
    protocol benchmark passes its folds), else they are read in :meth:`prepare`."""

    monitor = "valid_loss"
    mode = "min"

    def __init__(self, cfg: StocksConfig, sets: StockSets | None = None):
        self.config = cfg
        self.sets = sets

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        if self.sets is None:
            self.sets = load_sets(self.config.data)
        sizes = ", ".join(f"{k} {len(v)}" for k, v in self.sets.windows.items())
        log.info(
            "%s, features %s: windows %s", self.sets.series.source, self.sets.series.columns, sizes
        )
        if len(self.sets.windows["train"]) == 0:
            raise ValueError("no training windows: the training days are fewer than a window")

    def build_model(self) -> StockForecaster:
        d = self.config.data
        return StockForecaster(self.config.model, len(d.columns), d.horizon)

    def epoch_batches(self, epoch: int) -> list[torch.Tensor]:
        """Shuffled window indices, a pure function of ``(seed, epoch)``."""
        t = self.config.train
        g = torch.Generator().manual_seed(t.seed * 100_003 + epoch)
        order = torch.randperm(len(self.sets.windows["train"]), generator=g)  # (N,)
        return list(order.split(t.batch_size))

    def units(self, batch: torch.Tensor) -> int:
        return batch.numel()

    def loss(self, model, batch: torch.Tensor) -> Loss:
        w = self.sets.windows["train"]
        device = next(model.parameters()).device
        x = torch.as_tensor(w.x[batch.numpy()], dtype=torch.float32, device=device)  # (b, T, F)
        y = torch.as_tensor(w.y[batch.numpy()], dtype=torch.float32, device=device)  # (b, h)
        pred = model(x).prediction.float()
        return Loss(F.mse_loss(pred, y, reduction="none").mean(1).sum(), batch.numel())

    def validate(self, model) -> dict:
        """Mean squared error per window on the validation split (none without one)."""
        w = self.sets.windows["valid"]
        if len(w) == 0:
            return {}
        pred = forecast(model, w)
        return {"valid_loss": float(((pred - w.y) ** 2).mean())}

    def finish(self, run: RunDir, model, result: TrainResult) -> dict:
        """The test table of the kept model (the engine has loaded the best epoch's weights),
        led by its and persistence's test MAPE (%) at horizon 1, and the scaling, for
        ``metrics.json``."""
        final, table = {}, None
        if len(self.sets.windows["test"]) >= 3:
            kind = self.config.model.kind
            table = score_split(model, self.sets, "test", name=kind, arima=self.config.train.arima)
            final["test_mape_h1"] = table["models"][kind]["mape"][0]
            final["persistence_mape_h1"] = table["models"]["persistence"]["mape"][0]
        final.update(
            name=self.config.name,
            parameters=result.n_parameters,
            train_seconds=result.seconds,
            scaling=self.sets.scaling.to_dict(),
            columns=self.sets.series.columns,
            seen_until=self._seen_until(),
        )
        if table is not None:
            final["test"] = table
        return final

    def _seen_until(self) -> str:
        """The last day whose price the run trained or validated on (the training and
        validation windows' last target): later days are out of sample."""
        horizon = self.config.data.horizon
        used = [self.sets.windows[k] for k in ("train", "valid")]
        day = max(int(w.last.max()) + horizon for w in used if len(w))
        return str(self.sets.series.dates[day])
