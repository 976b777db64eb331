"""What a layer costs: self-attention vs recurrent vs convolutional (Vaswani et al. 2017, Table 1).

For a sequence of length ``n`` and width ``d``:

====================  =================  ===============  ================
layer                 work per layer     sequential ops   max path length
====================  =================  ===============  ================
self-attention        O(n^2 · d)         O(1)             O(1)
recurrent             O(n · d^2)         O(n)             O(n)
convolutional         O(k · n · d^2)     O(1)             O(log_k n)
====================  =================  ===============  ================

**The counting used here.** A *multiply-add* is one ``a * b + c``; the headline figure,
``flops``, counts the multiply and the add separately (2 FLOPs per multiply-add), the usual
convention for FLOP counts of matrix products.

- *Self-attention* (the attention itself, as in Table 1): the scores ``Q K^T`` are
  ``n x n`` dot products of length ``d`` (``n^2 d`` multiply-adds) and the weighted sum
  ``A V`` is another ``n^2 d``: ``2 n^2 d`` multiply-adds, ``4 n^2 d`` FLOPs. The softmax
  (``O(n^2)``) is left out. The four projections ``W^Q, W^K, W^V, W^O`` are ``4 n d^2``
  more multiply-adds, an ``O(n d^2)`` term that Table 1 also leaves out; pass
  ``include_projections=True`` to add them.
- *Recurrent* (an LSTM, Hochreiter & Schmidhuber 1997): at each of the ``n`` steps each of the
  ``g = 4`` gates computes ``W x_t + U h_{t-1}`` with ``W, U`` of shape ``(d, d)``:
  ``2 g d^2`` multiply-adds per step, ``2 g n d^2`` per layer, ``4 g n d^2`` FLOPs. Element-wise
  work (``O(n d)``) is left out. ``gates=1`` is a plain (Elman) RNN, ``gates=3`` a GRU.
- *Convolutional*: a kernel of width ``k`` from ``d`` to ``d`` channels at each of ``n``
  positions, ``k n d^2`` multiply-adds.

At ``n = d = 1000`` this gives the classic figures: self-attention ``4 · 10^9`` FLOPs
(``2 · 10^9`` multiply-adds), LSTM ``16 · 10^9`` FLOPs (``8 · 10^9`` multiply-adds), and a
width-3 convolution ``6 · 10^9`` FLOPs. Self-attention costs more than the LSTM once
``4 n^2 d > 16 n d^2``, that is for ``n > 4 d`` (:func:`crossover_length`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class LayerCost:
    """The cost of one layer over a whole sequence.

    Attributes:
        layer: a name (``"self-attention"``, ``"recurrent (LSTM)"``, ``"convolution (k=3)"``).
        complexity: the order of its work, as in Vaswani et al. 2017, Table 1.
        multiply_adds: multiply-adds for the sequence (see the module docstring).
        flops: ``2 * multiply_adds`` (a multiply and an add each count as one).
        sequential_operations: steps that must run one after another.
        max_path_length: the most layers/steps a signal crosses between two positions.
        sequential_complexity, path_complexity: the orders of those two, as in Table 1.
    """

    layer: str
    complexity: str
    multiply_adds: int
    flops: int
    sequential_operations: int
    sequential_complexity: str
    max_path_length: int
    path_complexity: str


@dataclass(frozen=True)
class CostReport:
    """Costs of the layers for one ``length`` (n) and ``width`` (d)."""

    length: int
    width: int
    layers: tuple[LayerCost, ...]
    crossover_length: int
    counting: str

    def layer(self, prefix: str) -> LayerCost:
        """The row whose name starts with ``prefix`` (``"self-attention"``, ``"recurrent"``)."""
        for row in self.layers:
            if row.layer.startswith(prefix):
                return row
        raise KeyError(f"no layer named {prefix!r}; have {[r.layer for r in self.layers]}")

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return asdict(self)


def _check(n: int, d: int) -> None:
    if n < 1 or d < 1:
        raise ValueError(f"length and width must be positive integers, got n={n}, d={d}")


def self_attention_cost(n: int, d: int, include_projections: bool = False) -> LayerCost:
    """``Q K^T`` and ``A V``: ``2 n^2 d`` multiply-adds (plus ``4 n d^2`` for the projections)."""
    _check(n, d)
    multiply_adds = 2 * n * n * d + (4 * n * d * d if include_projections else 0)
    name = "self-attention" + (" (with projections)" if include_projections else "")
    order = "O(n²·d + n·d²)" if include_projections else "O(n²·d)"
    return LayerCost(name, order, multiply_adds, 2 * multiply_adds, 1, "O(1)", 1, "O(1)")


def recurrent_cost(n: int, d: int, gates: int = 4) -> LayerCost:
    """``gates`` products ``W x_t + U h_{t-1}`` per step: ``2 gates n d^2`` multiply-adds.

    The ``n`` steps run one after another, and position 1 reaches position ``n`` through
    ``n - 1`` steps.
    """
    _check(n, d)
    cell = {1: "RNN", 3: "GRU", 4: "LSTM"}.get(gates, f"{gates} gates")
    multiply_adds = 2 * gates * n * d * d
    return LayerCost(
        f"recurrent ({cell})", "O(n·d²)", multiply_adds, 2 * multiply_adds, n, "O(n)", n - 1, "O(n)"
    )


def convolutional_cost(n: int, d: int, kernel: int = 3) -> LayerCost:
    """A width-``kernel`` convolution, ``d -> d`` channels: ``kernel n d^2`` multiply-adds.

    The path length is the depth of a stack of dilated convolutions that connects all ``n``
    positions, ``ceil(log_k n)`` (Vaswani et al. 2017, §4).
    """
    _check(n, d)
    if kernel < 2:
        raise ValueError(f"kernel width must be at least 2, got {kernel}")
    depth = 0
    while kernel**depth < n:  # smallest depth with kernel^depth >= n, in exact integers
        depth += 1
    multiply_adds = kernel * n * d * d
    return LayerCost(
        f"convolution (k={kernel})",
        "O(k·n·d²)",
        multiply_adds,
        2 * multiply_adds,
        1,
        "O(1)",
        max(depth, 1),
        "O(log_k n)",
    )


def crossover_length(d: int, gates: int = 4, include_projections: bool = False) -> int:
    """The length ``n*`` at which self-attention and the recurrent layer cost the same.

    ``2 n^2 d (+ 4 n d^2) = 2 g n d^2`` gives ``n* = (g - 2 [projections]) d``; self-attention
    is cheaper below it and costlier above it. For an LSTM (``g = 4``), ``n* = 4 d``. A result
    of 0 means self-attention is never the cheaper one.
    """
    return max((gates - (2 if include_projections else 0)) * d, 0)


def layer_costs(
    length: int = 1000,
    width: int = 1000,
    *,
    gates: int = 4,
    kernel: int | None = 3,
    include_projections: bool = False,
) -> CostReport:
    """Self-attention vs recurrent (vs convolutional unless ``kernel=None``) at ``n``, ``d``.

    With the defaults, ``layer_costs().layer("self-attention").flops == 4_000_000_000`` and
    ``layer_costs().layer("recurrent").flops == 16_000_000_000``.
    """
    rows = [
        self_attention_cost(length, width, include_projections),
        recurrent_cost(length, width, gates),
    ]
    if kernel is not None:
        rows.append(convolutional_cost(length, width, kernel))
    counting = (
        "FLOPs = 2 x multiply-adds; self-attention = QK^T + AV"
        + (" + 4 projections" if include_projections else " (projections and softmax left out)")
        + f"; recurrent = {gates} gate(s) x (W x_t + U h_t-1) per step"
    )
    crossover = crossover_length(width, gates, include_projections)
    return CostReport(length, width, tuple(rows), crossover, counting)


def engineering(x: float) -> str:
    """``4000000000 -> "4e9"``, ``16000000000 -> "16e9"``: exponent a multiple of 3."""
    if x == 0 or abs(x) < 1000:
        return f"{x:g}"
    exponent = 3 * math.floor(math.log10(abs(x)) / 3)
    return f"{x / 10**exponent:.3g}e{exponent}"
