"""Attention rollout and attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in
Transformers", §3).

Raw attention of a layer mixes that layer's inputs, which are already mixtures of the tokens.
Both methods follow the weights down through the layers to the input tokens. Each layer's
weights ``(H, T, T)`` are first averaged over heads and the residual connection is added as an
identity, then rows are renormalised (§3: ``A = 0.5 W_att + 0.5 I``)::

    A_l = normalise_rows((1 - r) mean_h(W_l) + r I)            r = residual = 0.5

- **rollout** (§3.1): ``R = A_{L-1} ... A_1 A_0``; ``R[i, j]`` is the share of input token
  ``j`` in the top layer's token ``i``, summed over all paths (products of weights).
- **flow** (§3.2): a graph with a node per (layer, token), ``l = 0 .. L``, and an edge from
  ``(l + 1, i)`` down to ``(l, j)`` of capacity ``A_l[i, j]``; ``F[i, j]`` is the maximum flow
  from ``(L, i)`` to ``(0, j)``. Computed here with Edmonds-Karp (shortest augmenting paths).

Both take :data:`attnkit.interpret.structure.Layers` (``(H, T, T)`` per layer, layer 0 first;
``(T, T)`` per layer is read as one head) and return a NumPy ``(T, T)`` array: rows are the top
layer's tokens, columns the input tokens.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from attnkit.interpret.heatmap import as_array

# Attention flow solves T^2 max-flow problems on (L + 1) T nodes. Measured (6 layers, dense
# random attention, one busy CPU core): T = 8 0.05 s, T = 16 1.2 s, T = 24 10 s, T = 32 53 s.
# Pass a larger max_tokens to attention_flow to wait longer.
MAX_FLOW_TOKENS = 24
EPS = 1e-12


def _layers(layers: Sequence) -> list[np.ndarray]:
    """Check shapes; ``(T, T)`` per layer, the head mean of each ``(H, T, T)``."""
    out = []
    for i, w in enumerate(layers):
        a = as_array(w)
        a = a.mean(0) if a.ndim == 3 else a  # (T, T)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(
                f"layer {i}: expected self-attention (H, T, T) or (T, T), got {as_array(w).shape}"
            )
        if out and a.shape != out[0].shape:
            raise ValueError(f"layer {i} has {a.shape[0]} tokens but layer 0 has {out[0].shape[0]}")
        out.append(a)
    if not out:
        raise ValueError("no layers given")
    return out


def with_residual(weights, residual: float = 0.5) -> np.ndarray:
    """``normalise_rows((1 - residual) W + residual I)`` for one layer's head-mean ``W (T, T)``
    (Abnar & Zuidema 2020, §3). Rows that sum to 0 stay 0."""
    if not 0.0 <= residual <= 1.0:
        raise ValueError(f"residual must be in [0, 1], got {residual}")
    w = as_array(weights)
    a = (1.0 - residual) * w + residual * np.eye(w.shape[0])  # (T, T)
    sums = a.sum(-1, keepdims=True)  # (T, 1)
    return np.divide(a, sums, out=np.zeros_like(a), where=sums > 0)


def attention_rollout(layers: Sequence, residual: float = 0.5) -> np.ndarray:
    """Attention rollout ``R = A_{L-1} ... A_0 (T, T)`` (Abnar & Zuidema 2020, eq. (1)).

    Each row sums to 1 (a product of row-stochastic matrices); with ``residual = 0`` and
    one-hot attention it follows the chain of argmaxes.
    """
    result = None
    for w in _layers(layers):
        a = with_residual(w, residual)  # (T, T)
        result = a if result is None else a @ result  # (T, T)
    return result


def max_flow(capacity, source: int, sink: int) -> float:
    """Maximum flow from ``source`` to ``sink`` in a directed graph ``capacity (V, V)``
    (``capacity[u, v]`` on edge ``u -> v``, 0 = no edge), by Edmonds-Karp (Edmonds & Karp 1972):
    augment along a shortest residual path found by breadth-first search until none is left.

    ``O(V E^2)`` time (at most ``O(V E)`` augmentations of ``O(E)`` each), whatever the
    capacities; ``O(V^2)`` memory. Capacities must be non-negative.
    """
    return _Network(capacity).max_flow(source, sink)


class _Network:
    """A capacity matrix as Python lists (fast scalar access) with each node's neighbours."""

    def __init__(self, capacity) -> None:
        cap = as_array(capacity)
        if cap.ndim != 2 or cap.shape[0] != cap.shape[1]:
            raise ValueError(f"capacity must be a square (V, V) matrix, got {cap.shape}")
        if (cap < 0).any():
            raise ValueError("capacities must be non-negative")
        linked = (cap > 0) | (cap > 0).T  # residual edges run both ways
        self.neighbours = [np.flatnonzero(row).tolist() for row in linked]
        self.capacity = cap.tolist()

    def max_flow(self, source: int, sink: int) -> float:
        if source == sink:
            raise ValueError("source and sink must differ")
        residual = [row[:] for row in self.capacity]
        total = 0.0
        while (parent := _shortest_path(residual, self.neighbours, source, sink)) is not None:
            path, v = [], sink
            while v != source:
                path.append((parent[v], v))
                v = parent[v]
            push = min(residual[u][v] for u, v in path)
            for u, v in path:
                residual[u][v] -= push
                residual[v][u] += push
            total += push
        return total


def _shortest_path(residual, neighbours, source: int, sink: int) -> list[int] | None:
    """Parents along a breadth-first search of edges with residual capacity, or None."""
    parent = [-1] * len(residual)
    parent[source] = source
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in neighbours[u]:
            if parent[v] < 0 and residual[u][v] > EPS:
                parent[v] = u
                if v == sink:
                    return parent
                queue.append(v)
    return None


def flow_graph(layers: Sequence, residual: float = 0.5) -> np.ndarray:
    """Capacities ``((L + 1) T, (L + 1) T)`` of the layer graph: node ``l * T + i`` is token
    ``i`` at layer ``l`` (``l = 0``: the input); edge ``(l + 1, i) -> (l, j)`` has capacity
    ``A_l[i, j]``."""
    mats = [with_residual(w, residual) for w in _layers(layers)]
    t, n = mats[0].shape[0], len(mats)
    cap = np.zeros(((n + 1) * t, (n + 1) * t))
    for l, a in enumerate(mats):
        cap[(l + 1) * t : (l + 2) * t, l * t : (l + 1) * t] = a  # (T, T) block
    return cap


def attention_flow(
    layers: Sequence, residual: float = 0.5, max_tokens: int = MAX_FLOW_TOKENS
) -> np.ndarray:
    """Attention flow ``F (T, T)`` (Abnar & Zuidema 2020, §3.2): ``F[i, j]`` is the maximum flow
    from top-layer token ``i`` to input token ``j`` (not renormalised; each is at most 1).

    Cost: ``T^2`` Edmonds-Karp runs on ``V = (L + 1) T`` nodes and ``E = L T^2`` edges, each
    ``O(V E^2)`` in the worst case. Inputs longer than ``max_tokens`` raise ``ValueError``;
    use :func:`attention_rollout` for them (matrix products, ``O(L T^3)``).
    """
    mats = _layers(layers)
    t, n = mats[0].shape[0], len(mats)
    if t > max_tokens:
        raise ValueError(
            f"attention flow on {t} tokens is too slow (T^2 max-flow problems on {n + 1} x {t} "
            f"nodes); the limit is max_tokens={max_tokens}: use attention_rollout, or raise "
            "max_tokens to wait longer"
        )
    network, top = _Network(flow_graph(mats, residual)), n * t
    return np.array([[network.max_flow(top + i, j) for j in range(t)] for i in range(t)])
