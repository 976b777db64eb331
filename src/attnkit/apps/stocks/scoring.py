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
from attnkit.apps.stocks.windows import Windows, log_prices
from attnkit.metrics.forecast import diebold_mariano, mape, r2


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
    prices = sets.scaling.prices
    truth = prices(w.y)  # (N, horizon)
    baselines, order = baseline_forecasts(sets, split, arima)
    forecasts = {name: forecast(model, w), **baselines}
    table = {k: horizon_table(truth, prices(v)) for k, v in forecasts.items()}
    base = truth - prices(forecasts["persistence"])
    tests = {}
    for k, v in forecasts.items():
        if k == "persistence":
            continue
        err = truth - prices(v)
        tests[k] = [asdict(diebold_mariano(err[:, h], base[:, h], horizon=h + 1))
                    for h in range(truth.shape[1])]  # fmt: skip
    result = {"windows": len(w), "models": table, "dm_vs_persistence": tests}
    if order is not None:
        result["arima_order"] = list(order)
    return result


def format_table(scores: dict) -> str:
    """The per-horizon table: one row per model, MAPE % and R² at each horizon."""
    models = scores["models"]
    horizons = len(next(iter(models.values()))["mape"])
    head = "model".ljust(14) + "".join(f"  h={h + 1} MAPE    R2" for h in range(horizons))
    rows = [head]
    for name, t in models.items():
        cells = "".join(f"  {m:8.3f} {r:6.3f}" for m, r in zip(t["mape"], t["r2"], strict=True))
        rows.append(name.ljust(14) + cells)
    for name, tests in scores.get("dm_vs_persistence", {}).items():
        ps = " ".join(f"{t['statistic']:+.2f} (p {t['p_value']:.3f})" for t in tests)
        rows.append(f"DM {name} vs persistence per horizon (negative: {name} better): {ps}")
    return "\n".join(rows)
