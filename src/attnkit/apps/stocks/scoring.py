"""Scoring forecasts as the paper does: MAPE and R² per horizon on prices (transformed back from
standardised log prices), beside persistence and ARIMA, with the Diebold-Mariano test of each
model against persistence (Diebold & Mariano 1995, with Harvey et al.'s 1997 correction).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from attnkit.apps.stocks.baselines import arima_forecasts, fit_arima, persistence
from attnkit.apps.stocks.sets import StockSets
from attnkit.apps.stocks.windows import Scaling, Windows, log_prices
from attnkit.metrics.forecast import diebold_mariano, mape, r2
from attnkit.results import Scores, Table


@torch.no_grad()
def forecast(model, windows: Windows, batch: int = 256) -> np.ndarray:
    """The model's standardised forecasts ``(N, horizon)`` of ``windows``."""
    training = model.training
    model.eval()
    device = next(model.parameters()).device
    out = []
    for start in range(0, len(windows), batch):
        x = torch.as_tensor(windows.x[start : start + batch], dtype=torch.float32, device=device)
        out.append(model(x).prediction.float().cpu().numpy())
    model.train(training)  # as it was
    return np.concatenate(out) if out else np.zeros((0, windows.y.shape[1]))


def horizon_table(truth: np.ndarray, predicted: np.ndarray) -> dict:
    """``{"mape": [..], "r2": [..]}``, one value per horizon, on prices ``(N, horizon)``."""
    return {"mape": mape(truth, predicted, axis=0).tolist(), "r2": r2(truth, predicted).tolist()}


def baseline_forecasts(
    sets: StockSets, split: str, arima: bool
) -> tuple[dict[str, np.ndarray], tuple[int, int, int] | None]:
    """Persistence and (if asked) ARIMA forecasts of ``split``'s windows, standardised, and
    the ARIMA order chosen (``None`` without ARIMA)."""
    w = sets.windows[split]
    horizon = w.y.shape[1]
    out, order = {"persistence": persistence(w.x, horizon)}, None
    if arima and len(w):
        logged = log_prices(sets.series)[:, 0]  # (T,)
        fit = fit_arima(logged[: sets.n_train])
        logs = arima_forecasts(fit, logged, w.last, horizon)  # (N, horizon) log prices
        out["arima"] = (logs - sets.scaling.mean[0]) / sets.scaling.std[0]
        order = fit.order
    return out, order


def score_split(model, sets: StockSets, split: str, *, name: str, arima: bool = True) -> dict:
    """Per-horizon MAPE and R² of ``model`` (under ``name``), persistence and ARIMA on prices,
    and the Diebold-Mariano test of each against persistence (squared errors)."""
    w = sets.windows[split]
    if len(w) < 3:
        raise ValueError(f"the {split} split has {len(w)} windows; scoring needs at least 3")
    baselines, order = baseline_forecasts(sets, split, arima)
    result = score_windows(model, sets.scaling, w, name=name, baselines=baselines)
    if order is not None:
        result["arima_order"] = list(order)
    return result


def score_windows(
    model, scaling: Scaling, w: Windows, *, name: str, baselines: dict | None = None
) -> dict:
    """:func:`score_split`'s table for any windows ``w`` (standardised with ``scaling``):
    the model, the ``baselines``' standardised forecasts (default: persistence alone) and the
    Diebold-Mariano test of each against persistence."""
    prices = scaling.prices
    truth = prices(w.y)  # (N, horizon)
    if baselines is None:
        baselines = {"persistence": persistence(w.x, w.y.shape[1])}
    forecasts = {name: forecast(model, w), **baselines}
    table = {k: horizon_table(truth, prices(v)) for k, v in forecasts.items()}
    base = truth - prices(forecasts["persistence"])
    tests = {}
    for k, v in forecasts.items():
        if k == "persistence":
            continue
        err = truth - prices(v)
        tests[k] = [
            asdict(diebold_mariano(err[:, h], base[:, h], horizon=h + 1))
            for h in range(truth.shape[1])
        ]
    return {"windows": len(w), "models": table, "dm_vs_persistence": tests}


def as_scores(run: str, split: str, scores: dict, name: str) -> Scores:
    """:func:`score_split`'s result as :class:`~attnkit.results.Scores`: the model's MAPE (%)
    and R² per horizon (``mape.h1``, ...), persistence and ARIMA as baselines, and the
    Diebold-Mariano tests against persistence as a table."""

    def per_horizon(table: dict) -> dict:
        return {m: {f"h{h + 1}": v for h, v in enumerate(table[m])} for m in ("mape", "r2")}

    models = scores["models"]
    out = Scores(run, split, per_horizon(models[name]), scores["windows"], "windows")
    out.baselines = {k: per_horizon(v) for k, v in models.items() if k != name}
    if "arima_order" in scores:
        out.baselines["arima"]["order"] = str(tuple(scores["arima_order"]))
    dm = [
        [model, h + 1, t["statistic"], t["p_value"]]
        for model, tests in scores["dm_vs_persistence"].items()
        for h, t in enumerate(tests)
    ]
    title = "Diebold-Mariano against persistence (negative: the model is better)"
    out.tables.append(Table(title, ["model", "horizon", "statistic", "p_value"], dm))
    return out
