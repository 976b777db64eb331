"""The recurrent cells of a RIM: ``k`` independent cells stepped together, one weight set each.

:class:`GroupLinear` is ``k`` linear maps applied side by side (Goyal et al. 2019, §2: every
mechanism has its own parameters). :class:`AlphaTCells` is the exponentially smoothed RNN of
Dixon & London (2021), "Industrial forecasting with exponentially smoothed recurrent neural
networks", §3, eqs. (9)-(11), with a learned, time-varying smoothing coefficient::

    h_hat_t = tanh(W_h x_t + U_h h_{t-1} + b_h)                  (candidate)
    alpha_t = sigmoid(W_a x_t + U_a h_{t-1} + b_a)                (smoothing, in (0, 1))
    h_t     = alpha_t * h_hat_t + (1 - alpha_t) * h_{t-1}         (exponential smoothing)

With ``alpha`` fixed (``fixed_alpha``), ``h_t`` is simple exponential smoothing of the
candidates, ``h_t = a h_hat_t + (1 - a) h_{t-1}``. :class:`LSTMCells` are ``k`` LSTMs
(Hochreiter & Schmidhuber 1997), the cells of the plain RIM (Goyal et al. 2019, §2.2).

A state is a tuple of ``(B, k, units)`` tensors: ``(h,)`` for alpha_t cells, ``(h, c)`` for
LSTMs; ``state[0]`` is what the other cells and the forecast read.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

State = tuple[Tensor, ...]


class GroupLinear(nn.Module):
    """``k`` independent linear maps: ``(B, k, d_in) -> (B, k, d_out)``, ``y_i = x_i W_i + b_i``."""

    def __init__(self, k: int, d_in: int, d_out: int, bias: bool = True):
        super().__init__()
        bound = 1 / math.sqrt(d_in)  # nn.Linear's default initialisation, per cell
        self.weight = nn.Parameter(torch.empty(k, d_in, d_out).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(k, d_out).uniform_(-bound, bound)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        y = torch.einsum("bki,kio->bko", x, self.weight)  # (B, k, d_out)
        return y + self.bias if self.bias is not None else y


class AlphaTCells(nn.Module):
    """``k`` alpha_t-RNN cells (Dixon & London 2021, eqs. (9)-(11); see the module docstring).

    Args:
        k: number of cells; d_in: each cell's input width; units: each cell's state width.
        fixed_alpha: a constant smoothing coefficient in (0, 1] instead of the learned
            ``alpha_t`` (``1.0``: a plain tanh RNN).
    """

    def __init__(self, k: int, d_in: int, units: int, fixed_alpha: float | None = None):
        super().__init__()
        if fixed_alpha is not None and not 0 < fixed_alpha <= 1:
            raise ValueError(f"fixed_alpha must be in (0, 1], got {fixed_alpha}")
        self.k, self.units, self.fixed_alpha = k, units, fixed_alpha
        self.input = GroupLinear(k, d_in, 2 * units)  # W_h, W_a and both biases
        self.hidden = GroupLinear(k, units, 2 * units, bias=False)  # U_h, U_a

    def initial_state(self, batch: int, device=None) -> State:
        return (torch.zeros(batch, self.k, self.units, device=device),)

    def forward(self, x: Tensor, state: State) -> tuple[State, Tensor]:
        """``x (B, k, d_in)``, ``state`` -> the new state and ``alpha_t (B, k, units)``."""
        (h,) = state
        pre = self.input(x) + self.hidden(h)  # (B, k, 2 * units)
        candidate, gate = pre.chunk(2, dim=-1)  # (B, k, units) each
        h_hat = torch.tanh(candidate)
        if self.fixed_alpha is None:
            alpha = torch.sigmoid(gate)
        else:
            alpha = torch.full_like(h_hat, self.fixed_alpha)
        return (alpha * h_hat + (1 - alpha) * h,), alpha


class LSTMCells(nn.Module):
    """``k`` LSTM cells, each with its own weights (the plain RIM's cells)."""

    def __init__(self, k: int, d_in: int, units: int):
        super().__init__()
        self.k, self.units = k, units
        self.input = GroupLinear(k, d_in, 4 * units)
        self.hidden = GroupLinear(k, units, 4 * units, bias=False)

    def initial_state(self, batch: int, device=None) -> State:
        zeros = torch.zeros(batch, self.k, self.units, device=device)
        return (zeros, zeros.clone())

    def forward(self, x: Tensor, state: State) -> tuple[State, None]:
        h, c = state
        gates = self.input(x) + self.hidden(h)  # (B, k, 4 * units)
        i, f, g, o = gates.chunk(4, dim=-1)  # (B, k, units) each
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return (torch.sigmoid(o) * torch.tanh(c), c), None
