"""Reading a RIM's attention over many windows: which cells are active on each window's last
day, how much they read each feature (price, sentiment) and the null token, and who reads
from whom (Koenigstein 2023, §5: the activation pattern as an explanation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnkit.apps.stocks.windows import Windows


@dataclass
class Trace:
    """Per window ``n`` (its last input day): ``active (N, k)`` bool, ``input_weights
    (N, k, F + 1)`` (null last), ``comm_weights (N, k, k)``, ``alpha (N, k)`` or ``None``, and
    the standardised forecasts ``prediction (N, horizon)``."""

    active: np.ndarray
    input_weights: np.ndarray
    comm_weights: np.ndarray
    alpha: np.ndarray | None
    prediction: np.ndarray

    def feature_weights(self) -> np.ndarray:
        """``(N, F + 1)``: each feature's (and the null token's) input-attention weight,
        averaged over the cells active that day."""
        active = self.active[..., None]  # (N, k, 1)
        total = (self.input_weights * active).sum(1)  # (N, F + 1)
        return total / np.maximum(active.sum(1), 1)

    def comm_mean(self) -> np.ndarray:
        """``(k, k)``: communication weights averaged over the windows where the reader (row)
        was active."""
        active = self.active[..., None]  # (N, k, 1)
        return (self.comm_weights * active).sum(0) / np.maximum(active.sum(0), 1)


@torch.no_grad()
def trace(model, windows: Windows, batch: int = 256) -> Trace:
    """Run ``model`` (a RIM forecaster) over ``windows`` and keep each window's last day."""
    training = model.training
    model.eval()
    parts: dict[str, list] = {k: [] for k in ("active", "input", "comm", "alpha", "pred")}
    for start in range(0, len(windows), batch):
        x = torch.as_tensor(windows.x[start : start + batch], dtype=torch.float32)
        out = model(x)
        if out.record is None:
            raise ValueError("only RIM models (alpha_t_rim, rim) record attention")
        r = out.record
        parts["active"].append(r.active[:, -1].numpy())
        parts["input"].append(r.input_weights[:, -1].float().numpy())
        parts["comm"].append(r.comm_weights[:, -1].float().numpy())
        parts["alpha"].append(None if r.alpha is None else r.alpha[:, -1].float().numpy())
        parts["pred"].append(out.prediction.float().numpy())
    model.train(training)  # as it was
    alpha = None if parts["alpha"][0] is None else np.concatenate(parts["alpha"])
    return Trace(
        np.concatenate(parts["active"]),
        np.concatenate(parts["input"]),
        np.concatenate(parts["comm"]),
        alpha,
        np.concatenate(parts["pred"]),
    )
