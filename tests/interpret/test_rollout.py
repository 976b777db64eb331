"""Attention rollout and flow (Abnar & Zuidema 2020) on examples computed by hand, and their
invariants; Edmonds-Karp against brute-force minimum cuts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from attnkit.interpret.rollout import (
    MAX_FLOW_TOKENS,
    attention_flow,
    attention_rollout,
    flow_graph,
    max_flow,
    with_residual,
)

# Layer 0 has two heads whose mean is uniform; layer 1 sends both tokens to token 1.
LAYER0 = np.array([[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]])  # (H=2, T, T)
LAYER1 = np.array([[[0.0, 1.0], [0.0, 1.0]]])  # (H=1, T, T)


def random_layers(n_layers: int, t: int, heads: int = 3, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    w = rng.random((n_layers, heads, t, t)) ** 3
    return list(w / w.sum(-1, keepdims=True))


def test_residual_is_added_and_rows_renormalised():
    # mean of LAYER0 is 0.5 everywhere: 0.5 * 0.5 + 0.5 * I
    assert np.allclose(with_residual(LAYER0.mean(0)), [[0.75, 0.25], [0.25, 0.75]])
    # rows that do not sum to 1 (a masked query row, a scaled row) are renormalised:
    # 0.5 w + 0.5 I = [[0.5, 0], [1, 1.5]] -> [[1, 0], [0.4, 0.6]]
    w = np.array([[0.0, 0.0], [2.0, 2.0]])
    assert np.allclose(with_residual(w), [[1.0, 0.0], [0.4, 0.6]])
    assert np.allclose(with_residual(w, residual=0.0), [[0.0, 0.0], [0.5, 0.5]])  # no NaN
    with pytest.raises(ValueError, match=r"residual must be in \[0, 1\]"):
        with_residual(w, residual=1.5)


def test_rollout_two_layers_by_hand():
    # A0 = [[.75, .25], [.25, .75]], A1 = 0.5 [[0, 1], [0, 1]] + 0.5 I = [[.5, .5], [0, 1]]
    # R = A1 @ A0 = [[.5, .5], [.25, .75]]  (A0 @ A1 would be [[.375, .625], [.125, .875]])
    rollout = attention_rollout([LAYER0, torch.tensor(LAYER1)])
    assert np.allclose(rollout, [[0.5, 0.5], [0.25, 0.75]])


def test_rollout_without_residual_is_the_product():
    # one-hot attention, no residual: token i's chain of argmaxes (0 -> 2 -> 1 etc.)
    perm0 = np.eye(3)[[2, 0, 1]]  # query i attends to key p0[i]
    perm1 = np.eye(3)[[1, 2, 0]]
    rollout = attention_rollout([perm0, perm1], residual=0.0)
    assert np.array_equal(rollout, perm1 @ perm0)
    assert np.array_equal(rollout.argmax(1), [perm0.argmax(1)[j] for j in perm1.argmax(1)])


@pytest.mark.parametrize("seed", range(4))
def test_rollout_rows_sum_to_one(seed):
    layers = random_layers(5, 7, seed=seed)
    layers[2][:, 3] = 0.0  # a fully masked query row
    rollout = attention_rollout(layers)
    assert rollout.shape == (7, 7)
    assert np.allclose(rollout.sum(1), 1.0) and (rollout >= 0).all()


def test_identity_attention_gives_identity():
    layers = [np.broadcast_to(np.eye(4), (2, 4, 4)) for _ in range(3)]
    assert np.allclose(attention_rollout(layers), np.eye(4))
    assert np.allclose(attention_flow(layers), np.eye(4))


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match="no layers"):
        attention_rollout([])
    with pytest.raises(ValueError, match=r"layer 0: expected self-attention .* \(2, 3, 4\)"):
        attention_rollout([np.ones((2, 3, 4))])
    with pytest.raises(ValueError, match="layer 1 has 3 tokens but layer 0 has 4"):
        attention_flow([np.eye(4), np.eye(3)])


def test_max_flow_by_hand():
    # 0 -> 1 (3), 0 -> 2 (2), 1 -> 2 (1), 1 -> 3 (3), 2 -> 4 (2), 3 -> 4 (2): the cut into
    # node 4 has capacity 2 + 2 = 4, reached by 0-2-4 (2) and 0-1-3-4 (2).
    cap = np.zeros((5, 5))
    for u, v, c in [(0, 1, 3), (0, 2, 2), (1, 2, 1), (1, 3, 3), (2, 4, 2), (3, 4, 2)]:
        cap[u, v] = c
    assert max_flow(cap, 0, 4) == pytest.approx(4.0)
    assert max_flow(cap, 4, 0) == 0.0  # edges are directed
    assert max_flow(cap, 1, 4) == pytest.approx(3.0)  # 1-2-4 (1) and 1-3-4 (2)
    with pytest.raises(ValueError, match="non-negative"):
        max_flow(-cap, 0, 4)


def min_cut(cap: np.ndarray, s: int, t: int) -> float:
    """Brute force over every cut (S contains s, not t): the max-flow min-cut theorem."""
    others = [v for v in range(len(cap)) if v not in (s, t)]
    best = np.inf
    for bits in itertools.product([False, True], repeat=len(others)):
        side = np.zeros(len(cap), bool)
        side[s] = True
        side[[v for v, b in zip(others, bits, strict=True) if b]] = True
        best = min(best, cap[side][:, ~side].sum())
    return best


@pytest.mark.parametrize("seed", range(6))
def test_max_flow_equals_min_cut(seed):
    rng = np.random.default_rng(seed)
    cap = rng.random((7, 7)) * (rng.random((7, 7)) < 0.5)
    np.fill_diagonal(cap, 0.0)
    assert max_flow(cap, 0, 6) == pytest.approx(min_cut(cap, 0, 6), abs=1e-12)


def test_flow_two_layers_by_hand():
    w0 = np.array([[0.7, 0.3], [0.4, 0.6]])
    w1 = np.array([[0.2, 0.8], [0.5, 0.5]])
    # without residual each path (2,i) -> (1,k) -> (0,j) is disjoint from the others:
    # F[i, j] = sum_k min(w1[i, k], w0[k, j])
    expected = [[0.2 + 0.4, 0.2 + 0.6], [0.5 + 0.4, 0.3 + 0.5]]
    assert np.allclose(attention_flow([w0, w1], residual=0.0), expected)
    # rollout sums products instead: w1 @ w0
    assert np.allclose(attention_rollout([w0, w1], residual=0.0), [[0.46, 0.54], [0.55, 0.45]])
    # with the residual, one layer: the flow is the augmented edge itself
    assert np.allclose(attention_flow([w0]), with_residual(w0))


def widest_paths(layers, residual: float = 0.5) -> np.ndarray:
    """Best single path: the largest bottleneck (min edge) from each top token to each input."""
    mats = [with_residual(w.mean(0), residual) for w in layers]
    best = np.eye(len(mats[0]))  # (top token, current token)
    for a in reversed(mats):  # from the top layer down
        best = np.max(np.minimum(best[:, :, None], a[None]), axis=1)
    return best


@pytest.mark.parametrize("seed", range(3))
def test_flow_at_least_the_widest_single_path_and_at_most_one(seed):
    layers = random_layers(3, 5, seed=seed)
    flow = attention_flow(layers)
    assert (flow >= widest_paths(layers) - 1e-12).all()
    assert (flow <= 1.0 + 1e-9).all()
    # no more than can enter input token j from layer 1
    into = flow_graph(layers)[5:10, :5].sum(0)
    assert (flow <= into[None] + 1e-9).all()


def test_flow_refuses_long_inputs_with_a_clear_error():
    t = MAX_FLOW_TOKENS + 1
    with pytest.raises(ValueError, match=f"{t} tokens .* max_tokens={MAX_FLOW_TOKENS}"):
        attention_flow([np.eye(t)])
    assert np.allclose(attention_flow([np.eye(3)], max_tokens=3), np.eye(3))
