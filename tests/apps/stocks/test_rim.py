"""The RIM step against a NumPy step-by-step reference of Goyal et al. (2019) eqs. (1)-(4), the
top-k_A selection, and the alpha_t cell against exponential smoothing (Dixon & London 2021)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from attnkit.apps.stocks.cells import AlphaTCells
from attnkit.apps.stocks.rim import RIMLayer


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _group(x, lin):  # (B, k, i) @ (k, i, o) per cell, NumPy
    w = lin.weight.detach().numpy().astype(np.float64)
    y = np.stack([x[:, i] @ w[i] for i in range(w.shape[0])], 1)
    return y if lin.bias is None else y + lin.bias.detach().numpy()


def _reference_step(layer: RIMLayer, x: np.ndarray, h: np.ndarray):
    """One alpha_t-RIM step written out per equation, with loops instead of reshapes."""
    p = {n: t.detach().numpy().astype(np.float64) for n, t in layer.named_parameters()}
    b, k, heads = x.shape[0], layer.k, layer.heads
    tokens = x[..., None] * p["token_scale"] + p["token_shift"]  # (B, F, E)
    tokens = np.concatenate([tokens, np.zeros((b, 1, tokens.shape[-1]))], 1)  # null token
    keys = tokens @ p["key.weight"].T + p["key.bias"]  # (B, F+1, H*Dk)
    values = x[..., None] * p["value_scale"] + p["value_shift"]  # x_f v + o_f
    values = np.concatenate([values, np.zeros((b, 1, values.shape[-1]))], 1)  # null: zero
    query = _group(h, layer.query)  # (B, k, H*Dk)
    dk, dv = keys.shape[-1] // heads, values.shape[-1] // heads
    weights, context = [], []
    for j in range(heads):  # eq. (1)-(2): softmax(q K^T / sqrt(d)) V per head
        s = query[..., j * dk : (j + 1) * dk] @ keys[..., j * dk : (j + 1) * dk].swapaxes(1, 2)
        a = _softmax(s / np.sqrt(dk))  # (B, k, F+1)
        weights.append(a)
        context.append(a @ values[..., j * dv : (j + 1) * dv])
    weights, context = np.mean(weights, 0), np.concatenate(context, -1)
    active = np.zeros((b, k), bool)
    for n in range(b):  # eq. (3): the k_A cells with the least weight on the null token
        active[n, np.argsort(weights[n, :, -1], kind="stable")[: layer.k_active]] = True
    pre = _group(context * active[..., None], layer.cells.input) + _group(h, layer.cells.hidden)
    u = h.shape[-1]
    alpha = 1 / (1 + np.exp(-pre[..., u:]))
    stepped = np.where(active[..., None], alpha * np.tanh(pre[..., :u]) + (1 - alpha) * h, h)
    q, kk, v = (_group(stepped, m) for m in (layer.comm_query, layer.comm_key, layer.comm_value))
    ch = layer.comm_heads
    dk, dv = q.shape[-1] // ch, v.shape[-1] // ch
    parts = []
    for j in range(ch):  # eq. (4): active cells read from every cell
        s = q[..., j * dk : (j + 1) * dk] @ kk[..., j * dk : (j + 1) * dk].swapaxes(1, 2)
        parts.append(_softmax(s / np.sqrt(dk)) @ v[..., j * dv : (j + 1) * dv])
    comm = _group(np.concatenate(parts, -1), layer.comm_out)
    return np.where(active[..., None], stepped + comm, h), active, weights


@pytest.mark.parametrize("cells,active,heads", [(6, 3, 1), (5, 1, 2), (4, 4, 2)])
def test_one_step_equals_the_numpy_reference(cells, active, heads):
    torch.manual_seed(cells * 10 + active)
    layer = RIMLayer(
        3,
        cells=cells,
        active=active,
        units=5,
        heads=heads,
        key_size=4,
        value_size=3,
        comm_heads=2,
        comm_key_size=4,
        comm_value_size=3,
    )
    x, h = torch.randn(4, 3), torch.randn(4, cells, 5)
    (h_new,), step = layer(x, (h,))
    ref_h, ref_active, ref_weights = _reference_step(layer, x.double().numpy(), h.double().numpy())
    assert np.array_equal(step.active.numpy(), ref_active)
    np.testing.assert_allclose(step.input_weights.detach().numpy(), ref_weights, atol=1e-6)
    np.testing.assert_allclose(h_new.detach().numpy(), ref_h, atol=1e-5)


def test_exactly_k_active_cells_update_and_the_rest_keep_their_state():
    torch.manual_seed(0)
    layer = RIMLayer(2, cells=7, active=3, units=4)
    state = layer.initial_state(16)
    for _ in range(6):
        h_old = state[0]
        state, step = layer(torch.randn(16, 2), state)
        assert (step.active.sum(-1) == 3).all()
        inactive = ~step.active
        assert torch.equal(state[0][inactive], h_old[inactive])  # untouched
        assert (state[0][step.active] != h_old[step.active]).any(-1).all()  # updated
        null = step.input_weights[..., -1]  # (B, k): the chosen cells read the null least
        worst_active = null.masked_fill(~step.active, -1).max(-1).values
        best_inactive = null.masked_fill(step.active, 2).min(-1).values
        assert (worst_active <= best_inactive).all()
        rows = step.comm_weights.sum(-1)  # inactive cells read nothing
        assert torch.allclose(rows[step.active], torch.ones(16 * 3)) and (rows[inactive] == 0).all()


def test_inactive_cells_get_no_gradient_through_the_step():
    torch.manual_seed(1)
    layer = RIMLayer(2, cells=4, active=1, units=3)
    (h,), step = layer(torch.randn(1, 2), layer.initial_state(1))
    h.sum().backward()
    grads = layer.cells.input.weight.grad.abs().sum((1, 2))  # (k,): per cell
    chosen = step.active[0]
    assert (grads[chosen] > 0).all() and (grads[~chosen] == 0).all()


def _smooth(candidates: np.ndarray, a: float) -> np.ndarray:
    """pandas' exponentially weighted mean (adjust=False) from a zero start, per unit."""
    padded = np.concatenate([np.zeros((1, candidates.shape[1])), candidates])
    return pd.DataFrame(padded).ewm(alpha=a, adjust=False).mean().to_numpy()[1:]


@pytest.mark.parametrize("a", [0.1, 0.5, 0.9])
def test_alpha_t_with_a_fixed_alpha_is_exponential_smoothing(a):
    torch.manual_seed(2)
    cells = AlphaTCells(1, 3, 4)
    with torch.no_grad():
        cells.hidden.weight.zero_()  # U_h = 0: the candidates depend on the input only
    xs = torch.randn(30, 1, 1, 3)  # (T, B, k, d_in)
    candidates = torch.tanh(cells.input(xs.flatten(0, 1))[..., :4]).detach().numpy()[:, 0]
    for learned in (False, True):
        if learned:  # a learned alpha_t whose weights give a constant: W_a = U_a = 0, b_a
            cells.fixed_alpha = None
            with torch.no_grad():
                cells.input.weight[..., 4:] = 0
                cells.input.bias[..., 4:] = float(np.log(a / (1 - a)))
        else:
            cells.fixed_alpha = a
        state, hs = cells.initial_state(1), []
        for x in xs:
            state, _ = cells(x, state)
            hs.append(state[0][0, 0].detach().numpy())
        np.testing.assert_allclose(np.array(hs), _smooth(candidates, a), atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_active_cells_read_the_informative_input_and_give_the_null_no_weight(seed):
    """Goyal et al. 2019, §2.1: cells that read the input put no weight on the null token.
    Three features, the target is feature 1 on the last day; the others are noise."""
    from attnkit.apps.stocks.model import StockForecaster, StockModelConfig

    torch.manual_seed(seed)
    cfg = StockModelConfig(predict="level", cells=4, active=2, units=8, dropout=0.0)
    model = StockForecaster(cfg, 3, 1)  # level: the target is an input feature itself
    optimiser = torch.optim.Adam(model.parameters(), 1e-2)
    g = torch.Generator().manual_seed(seed)
    for _ in range(300):
        x = torch.randn(64, 4, 3, generator=g)  # (B, T, F)
        loss = ((model(x).prediction - x[:, -1, 1:2]) ** 2).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        record = model(torch.randn(256, 4, 3, generator=g)).record
    active = record.active[:, -1, :, None]  # (B, k, 1) on the last day
    weights = (record.input_weights[:, -1] * active).sum((0, 1)) / active.sum()  # (F + 1,)
    assert loss < 0.01
    assert weights[1] > 0.95 and weights[-1] < 0.02  # the informative feature; the null token
