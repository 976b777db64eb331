"""Forecasters of the next ``horizon`` days from a window of ``T`` days: Embed -> Encode ->
Attend -> Predict.

``alpha_t_rim`` (Koenigstein 2023) and ``rim`` (Goyal et al. 2019, LSTM cells) run a
:class:`~attnkit.apps.stocks.rim.RIMLayer` over the window, where attention picks the active
cells and lets them talk; ``rnn`` (Elman 1990) and ``lstm`` are the paper's baselines. Each reads
its final state into a linear map to all horizons at once (the paper's multi-output head).

``predict: change`` (the default) forecasts the change of the standardised log price from the
window's last day (persistence plus a learned correction); ``level`` the standardised log prices
themselves, as the paper (issue 35: level forecasts break out of range on later years).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from attnkit.apps.stocks.rim import RIMLayer, RIMStep
from attnkit.config import Checked, bounded


@dataclass
class StockModelConfig(Checked):
    """The ``model:`` section. RIM fields apply to ``alpha_t_rim`` and ``rim``; ``hidden`` and
    ``layers`` to ``rnn`` and ``lstm``."""

    kind: Literal["alpha_t_rim", "rim", "rnn", "lstm"] = "alpha_t_rim"
    predict: Literal["level", "change"] = "change"  # level: the paper's (configs *-paper.yaml)
    cells: int = bounded(6, ge=1)  # k recurrent cells
    active: int = bounded(3, ge=1)  # k_A cells updated per day (top-k_A by input attention)
    units: int = bounded(16, ge=1)  # state width per cell
    token_size: int = bounded(8, ge=1)  # each input feature's token width
    heads: int = bounded(1, ge=1)  # input attention heads
    key_size: int = bounded(8, ge=1)
    value_size: int = bounded(8, ge=1)
    comm_heads: int = bounded(2, ge=1)  # communication attention heads
    comm_key_size: int = bounded(8, ge=1)
    comm_value_size: int = bounded(8, ge=1)
    hidden: int = bounded(64, ge=1)  # rnn / lstm state width
    layers: int = bounded(1, ge=1)
    dropout: float = bounded(0.1, ge=0, lt=1)  # attention weights (RIM) or before the head

    def check(self) -> None:
        if self.active > self.cells:
            raise ValueError(f"active ({self.active}) must not exceed cells ({self.cells})")


@dataclass
class RIMRecord:
    """A window's attention, stacked over its ``T`` days: ``active (B, T, k)``,
    ``input_weights (B, T, k, F + 1)`` (the null token last), ``comm_weights (B, T, k, k)``,
    ``alpha (B, T, k)`` (alpha_t cells) or ``None``."""

    active: Tensor
    input_weights: Tensor
    comm_weights: Tensor
    alpha: Tensor | None

    @classmethod
    def stack(cls, steps: list[RIMStep]) -> RIMRecord:
        alpha = None if steps[0].alpha is None else torch.stack([s.alpha for s in steps], 1)
        return cls(
            torch.stack([s.active for s in steps], 1),
            torch.stack([s.input_weights for s in steps], 1),
            torch.stack([s.comm_weights for s in steps], 1),
            alpha,
        )


@dataclass
class Forecast:
    """``prediction (B, horizon)`` in the standardised log-price scale; ``record``: the RIM's
    attention over the window (``None`` for ``rnn`` and ``lstm``)."""

    prediction: Tensor
    record: RIMRecord | None = None


class StockForecaster(nn.Module):
    """Window ``x (B, T, F)`` (standardised; feature 0 is the log price) -> :class:`Forecast`."""

    def __init__(self, cfg: StockModelConfig, features: int, horizon: int):
        super().__init__()
        self.cfg = cfg
        if cfg.kind in ("alpha_t_rim", "rim"):
            self.rim = RIMLayer(
                features,
                cells=cfg.cells,
                active=cfg.active,
                units=cfg.units,
                cell="alpha_t" if cfg.kind == "alpha_t_rim" else "lstm",
                token_size=cfg.token_size,
                heads=cfg.heads,
                key_size=cfg.key_size,
                value_size=cfg.value_size,
                comm_heads=cfg.comm_heads,
                comm_key_size=cfg.comm_key_size,
                comm_value_size=cfg.comm_value_size,
                dropout=cfg.dropout,
            )
            width = cfg.cells * cfg.units
        else:
            rnn = nn.RNN if cfg.kind == "rnn" else nn.LSTM
            self.rnn = rnn(features, cfg.hidden, num_layers=cfg.layers, batch_first=True)
            self.drop = nn.Dropout(cfg.dropout)
            width = cfg.hidden
        self.head = nn.Linear(width, horizon)

    def forward(self, x: Tensor) -> Forecast:
        record = None
        if hasattr(self, "rim"):
            state = self.rim.initial_state(x.shape[0], x.device)
            steps = []
            for t in range(x.shape[1]):
                state, step = self.rim(x[:, t], state)
                steps.append(step)
            final = state[0].flatten(1)  # (B, k * units)
            record = RIMRecord.stack(steps)
        else:
            out, _ = self.rnn(x)  # (B, T, hidden)
            final = self.drop(out[:, -1])  # (B, hidden)
        prediction = self.head(final)  # (B, horizon)
        if self.cfg.predict == "change":
            prediction = prediction + x[:, -1, :1]  # from the window's last log price
        return Forecast(prediction, record)
