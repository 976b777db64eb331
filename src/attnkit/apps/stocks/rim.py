"""Recurrent Independent Mechanisms (Goyal et al. 2019, "Recurrent Independent Mechanisms",
ICLR 2021), with alpha_t cells: the alpha_t-RIM of Koenigstein (2023), "Dynamic and
context-dependent stock price prediction using attention modules and news sentiment".

One step of :class:`RIMLayer`, for ``k`` cells with states ``h (B, k, units)``:

1. **Input attention** (Goyal et al. §2.1, eqs. (1)-(2)). Each input feature ``f`` of
   ``x_t (B, F)`` becomes a token ``x_f e_f + c_f``, and a null token (zeros) is appended, as
   Goyal et al. append a row of zeros. Each cell's query ``W^q_i h_i`` attends over the
   ``F + 1`` tokens' keys ``W^k token + b^k`` and values (scaled dot product, softmax,
   ``heads`` heads): ``A_i = softmax(q_i K^T / sqrt(d)) V``. A feature's value is its number
   along one direction shared by all features plus a per-feature offset, ``x_f v + o_f``, and
   the null token's value is zero: a cell that spreads its weight reads a blend of the
   numbers, so the weights say which input it reads (price or sentiment), and the weight on
   the null token that it reads nothing. (With a separate value map per feature, as in a
   plain feature tokeniser, a cell reads every feature whatever its weights, and the weights
   stay uniform and say nothing.)
2. **Selection.** The ``active`` cells that put the *least* weight on the null token (mean over
   heads) are activated (top-``k_A``); only they update (eq. (3)); the others keep their state
   and get no gradient from this step.
3. **Communication** (§2.3, eq. (4)). Every active cell reads from all cells with multi-head
   key-value attention, ``h_i <- h_i + W^o_i softmax(q_i K^T / sqrt(d)) V``, keys and values
   from every cell's state after step 2 (inactive cells: their old state).

Both attentions are :func:`attnkit.attention.attend`; the weights come back in
:class:`RIMStep` (means over heads) for the pictures of which cells are active and what they read.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.apps.stocks.cells import AlphaTCells, GroupLinear, LSTMCells, State
from attnkit.attention import attend


@dataclass
class RIMStep:
    """What one step records, all per example: ``active (B, k)`` bool; ``input_weights
    (B, k, F + 1)`` each cell's input attention over the features and the null token (last);
    ``comm_weights (B, k, k)`` who reads from whom (rows of inactive cells are zero);
    ``alpha (B, k)`` the mean smoothing coefficient of each cell (alpha_t cells only)."""

    active: Tensor
    input_weights: Tensor
    comm_weights: Tensor
    alpha: Tensor | None


class RIMLayer(nn.Module):
    """``k`` recurrent cells that compete to read the input and talk through attention.

    Args:
        features: ``F``, input features per day; cells: ``k``; active: ``k_A`` cells updated
            per step (``k_A = k``: every cell, as the paper's chosen AMZN model).
        units: state width per cell; cell: ``"alpha_t"`` (Dixon & London 2021) or ``"lstm"``.
        heads / key_size / value_size: the input attention's; comm_*: the communication's.
        dropout: on both attentions' weights while training (the paper's ``1 - keep_prob``).
    """

    def __init__(
        self,
        features: int,
        *,
        cells: int = 6,
        active: int = 3,
        units: int = 16,
        cell: str = "alpha_t",
        token_size: int = 8,
        heads: int = 1,
        key_size: int = 8,
        value_size: int = 8,
        comm_heads: int = 2,
        comm_key_size: int = 8,
        comm_value_size: int = 8,
        dropout: float = 0.0,
    ):
        super().__init__()
        if not 1 <= active <= cells:
            raise ValueError(f"active must be between 1 and cells ({cells}), got {active}")
        self.k, self.k_active, self.units, self.dropout = cells, active, units, dropout
        self.heads, self.comm_heads = heads, comm_heads
        self.token_scale = nn.Parameter(torch.randn(features, token_size) * 0.5)  # e_f
        self.token_shift = nn.Parameter(torch.randn(features, token_size) * 0.5)  # c_f
        self.key = nn.Linear(token_size, heads * key_size)  # the null token's key: its bias
        # a feature's value: its number along one direction shared by all features, plus an
        # offset per feature; the null token's value is zero
        self.value_scale = nn.Parameter(torch.randn(heads * value_size) * 0.5)
        self.value_shift = nn.Parameter(torch.zeros(features, heads * value_size))
        self.query = GroupLinear(cells, units, heads * key_size)  # biased: cells differ at t=1
        d_in = heads * value_size
        if cell == "alpha_t":
            self.cells = AlphaTCells(cells, d_in, units)
        elif cell == "lstm":
            self.cells = LSTMCells(cells, d_in, units)
        else:
            raise ValueError(f"cell must be 'alpha_t' or 'lstm', got {cell!r}")
        self.comm_query = GroupLinear(cells, units, comm_heads * comm_key_size, bias=False)
        self.comm_key = GroupLinear(cells, units, comm_heads * comm_key_size, bias=False)
        self.comm_value = GroupLinear(cells, units, comm_heads * comm_value_size, bias=False)
        self.comm_out = GroupLinear(cells, comm_heads * comm_value_size, units)

    def initial_state(self, batch: int, device=None) -> State:
        return self.cells.initial_state(batch, device)

    def forward(self, x: Tensor, state: State) -> tuple[State, RIMStep]:
        """One day: ``x (B, F)`` and the cells' state -> the new state and what it recorded."""
        h_old = state[0]  # (B, k, units)
        read = self.read_input(x, h_old)
        cell_in = read.context * read.active[..., None]  # inactive cells read nothing
        new_state, alpha = self.cells(cell_in, state)
        keep = read.active[..., None]  # (B, k, 1)
        # inactive cells keep their state (and pass no gradient through this step's update)
        pairs = zip(new_state, state, strict=True)
        stepped = tuple(torch.where(keep, s, s_old) for s, s_old in pairs)
        h_comm, comm_weights = self.communicate(stepped[0], read.active)
        h = torch.where(keep, stepped[0] + h_comm, h_old)  # (B, k, units)
        record = RIMStep(
            read.active, read.weights, comm_weights, None if alpha is None else alpha.mean(-1)
        )
        return (h, *stepped[1:]), record

    def read_input(self, x: Tensor, h: Tensor) -> _Read:
        """Input attention and the top-``k_A`` selection (Goyal et al. 2019, eqs. (1)-(3))."""
        b, k, heads = x.shape[0], self.k, self.heads
        tokens = x[..., None] * self.token_scale + self.token_shift  # (B, F, token_size)
        tokens = torch.cat([tokens, tokens.new_zeros(b, 1, tokens.shape[-1])], 1)  # + null
        keys = self.key(tokens).view(b, -1, heads, self.key.out_features // heads)
        values = x[..., None] * self.value_scale + self.value_shift  # (B, F, H * Dv)
        values = torch.cat([values, values.new_zeros(b, 1, values.shape[-1])], 1)  # + null
        values = values.view(b, -1, heads, values.shape[-1] // heads)  # (B, F + 1, H, Dv)
        query = self.query(h).view(b, k, heads, -1)  # (B, k, H, Dk)
        out = attend(
            query.transpose(1, 2),
            keys.transpose(1, 2),
            values.transpose(1, 2),
            dropout=self.dropout if self.training else 0.0,
        )
        weights = out.weights.mean(1)  # (B, k, F + 1), mean over heads
        context = out.context.transpose(1, 2).reshape(b, k, -1)  # (B, k, H * Dv)
        chosen = (-weights[..., -1]).topk(self.k_active, dim=-1).indices  # (B, k_A)
        active = torch.zeros(b, k, dtype=torch.bool, device=x.device)
        active.scatter_(1, chosen, True)  # (B, k)
        return _Read(context, weights, active)

    def communicate(self, h: Tensor, active: Tensor) -> tuple[Tensor, Tensor]:
        """Active cells read from all cells (Goyal et al. 2019, eq. (4)): ``(B, k, units)``
        update and the weights ``(B, k, k)`` (mean over heads; zero rows for inactive cells)."""
        b, k, heads = h.shape[0], self.k, self.comm_heads
        q = self.comm_query(h).view(b, k, heads, -1).transpose(1, 2)  # (B, H, k, Dk)
        kk = self.comm_key(h).view(b, k, heads, -1).transpose(1, 2)  # (B, H, k, Dk)
        v = self.comm_value(h).view(b, k, heads, -1).transpose(1, 2)  # (B, H, k, Dv)
        mask = active[:, None, :, None]  # (B, 1, k, 1): only active cells' queries read
        out = attend(
            q, kk, v, mask.expand(b, 1, k, k), dropout=self.dropout if self.training else 0.0
        )
        context = out.context.transpose(1, 2).reshape(b, k, -1)  # (B, k, H * Dv)
        return self.comm_out(context), out.weights.mean(1)


@dataclass
class _Read:
    context: Tensor  # (B, k, H * Dv)
    weights: Tensor  # (B, k, F + 1)
    active: Tensor  # (B, k) bool
