"""Layer costs: the classic figures, the crossover, and agreement with PyTorch's FLOP counter."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from attnkit.attention import attend
from attnkit.attention.cost import (
    convolutional_cost,
    crossover_length,
    engineering,
    layer_costs,
    recurrent_cost,
    self_attention_cost,
)


def test_classic_figures_at_n_1000_d_1000():
    report = layer_costs(1000, 1000)
    attention, recurrent = report.layer("self-attention"), report.layer("recurrent")
    assert attention.flops == 4_000_000_000 and attention.multiply_adds == 2_000_000_000
    assert recurrent.flops == 16_000_000_000 and recurrent.multiply_adds == 8_000_000_000
    assert report.layer("convolution").flops == 6_000_000_000
    assert (attention.sequential_operations, attention.max_path_length) == (1, 1)
    assert (recurrent.sequential_operations, recurrent.max_path_length) == (1000, 999)
    assert report.crossover_length == 4000
    assert [engineering(r.flops) for r in report.layers] == ["4e9", "16e9", "6e9"]


def test_orders_follow_table_1():
    report = layer_costs()
    assert [r.complexity for r in report.layers] == ["O(n²·d)", "O(n·d²)", "O(k·n·d²)"]
    assert [r.sequential_complexity for r in report.layers] == ["O(1)", "O(n)", "O(1)"]
    assert [r.path_complexity for r in report.layers] == ["O(1)", "O(n)", "O(log_k n)"]


@given(st.integers(1, 500))
def test_crossover_separates_cheaper_from_costlier(d):
    n_star = crossover_length(d)
    assert n_star == 4 * d
    assert self_attention_cost(n_star, d).flops == recurrent_cost(n_star, d).flops
    assert self_attention_cost(n_star + 1, d).flops > recurrent_cost(n_star + 1, d).flops
    assert self_attention_cost(n_star - 1, d).flops < recurrent_cost(n_star - 1, d).flops


@pytest.mark.parametrize("gates", [1, 3, 4])
def test_crossover_with_projections(gates):
    d = 64
    n_star = crossover_length(d, gates, include_projections=True)
    assert n_star == max(gates - 2, 0) * d
    n = max(n_star, 1)
    attention = self_attention_cost(n + 1, d, include_projections=True).flops
    assert attention > recurrent_cost(n + 1, d, gates).flops


def test_projections_add_four_n_d_squared():
    assert self_attention_cost(10, 6, include_projections=True).multiply_adds == (
        2 * 10 * 10 * 6 + 4 * 10 * 6 * 6
    )


def count_flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize(("n", "d"), [(7, 5), (12, 16)])
def test_self_attention_matches_torch_flop_counter(n, d):
    x = torch.randn(1, n, d)
    measured = count_flops(lambda: attend(x, x, x, score="dot", need_weights=True))
    assert measured == self_attention_cost(n, d).flops


@pytest.mark.parametrize(("cell", "gates"), [("LSTMCell", 4), ("GRUCell", 3), ("RNNCell", 1)])
def test_recurrent_matches_torch_flop_counter(cell, gates):
    n, d = 9, 6
    module, x = getattr(torch.nn, cell)(d, d), torch.randn(n, 1, d)

    def run():
        h = torch.zeros(1, d)
        state = (h, h) if cell == "LSTMCell" else h
        for t in range(n):
            state = module(x[t], state)

    assert count_flops(run) == recurrent_cost(n, d, gates).flops


def test_convolution_matches_torch_flop_counter():
    n, d = 11, 4
    conv = torch.nn.Conv1d(d, d, kernel_size=3, padding=1)
    assert count_flops(lambda: conv(torch.randn(1, d, n))) == convolutional_cost(n, d).flops


def test_dilated_convolution_depth():
    assert convolutional_cost(9, 2, kernel=3).max_path_length == 2  # 3^2 = 9
    assert convolutional_cost(10, 2, kernel=3).max_path_length == 3
    assert convolutional_cost(1, 2).max_path_length == 1


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="positive"):
        layer_costs(0, 10)
    with pytest.raises(ValueError, match="kernel"):
        convolutional_cost(10, 10, kernel=1)
