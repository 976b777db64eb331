"""Luong local attention: windows, the local-p Gaussian, predicted positions."""

import math

import pytest
import torch

from attnkit.attention import (
    AttentionOutput,
    LocalAttention,
    MultiplicativeAttention,
    window_mask,
)


def test_local_m_attends_only_inside_the_window():
    layer = LocalAttention(6, window="local-m", half_width=2, score="dot")
    q, h = torch.randn(2, 8, 6), torch.randn(2, 10, 6)
    out = layer(q, h)
    assert isinstance(out, AttentionOutput)  # p_t is a field, not a tuple element
    torch.testing.assert_close(out.centres, torch.arange(8.0).expand(2, 8))  # p_t = t
    t, s = torch.arange(8)[:, None], torch.arange(10)[None, :]
    outside = (s - t).abs() > 2
    assert torch.all(out.weights[:, outside] == 0)
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(2, 8))
    # inside the window it is global dot attention restricted to the window
    ref = torch.softmax((q @ h.transpose(1, 2)).masked_fill(outside, float("-inf")), -1)
    torch.testing.assert_close(out.weights, ref)


def test_local_m_with_huge_window_is_global():
    local = LocalAttention(5, window="local-m", half_width=100, score="general")
    glob = MultiplicativeAttention(5, method="general")
    glob.score.load_state_dict(local.score.state_dict())
    q, h = torch.randn(2, 4, 5), torch.randn(2, 7, 5)
    torch.testing.assert_close(local(q, h).context, glob(q, h).context)


def test_local_m_decoding_step_uses_given_position():
    layer = LocalAttention(4, window="local-m", half_width=1, score="dot")
    q, h = torch.randn(1, 1, 4), torch.randn(1, 9, 4)
    out = layer(q, h, positions=torch.tensor([[5]]))
    assert out.centres.tolist() == [[5.0]]
    assert torch.all(out.weights[0, 0, [0, 1, 2, 3, 7, 8]] == 0)
    assert torch.all(out.weights[0, 0, 4:7] > 0)


def test_local_p_predicts_position_and_applies_gaussian_eq_10():
    torch.manual_seed(0)
    layer = LocalAttention(6, window="local-p", half_width=4, score="general")
    q, h = torch.randn(2, 3, 6), torch.randn(2, 12, 6)
    lengths = torch.tensor([12, 9])
    keep = torch.arange(12)[None] < lengths[:, None]
    out = layer(q, h, mask=keep[:, None, :], source_lengths=lengths)
    p = out.centres  # (B, Tq)
    # eq. (9): p_t = S * sigmoid(v_p^T tanh(W_p h_t))
    gate = torch.sigmoid(layer.v_p(torch.tanh(layer.W_p(q))))[..., 0]
    torch.testing.assert_close(p, lengths[:, None] * gate)
    # eq. (10): a_t(s) = align(h_t, h_s) * exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2
    s = torch.arange(12.0)
    inside = ((s - p[..., None]).abs() <= 4) & keep[:, None, :]
    scores = layer.score(q, h).masked_fill(~inside, float("-inf"))
    align = torch.softmax(scores, -1)
    gauss = torch.exp(-((s - p[..., None]) ** 2) / (2 * (4 / 2) ** 2))
    torch.testing.assert_close(out.weights, align * gauss)
    torch.testing.assert_close(out.context, out.weights @ h)
    assert torch.all(out.weights[1, :, 9:] == 0)


def test_local_p_position_is_trainable():
    layer = LocalAttention(4, window="local-p", half_width=2, score="dot")
    q, h = torch.randn(2, 3, 4), torch.randn(2, 8, 4)
    out = layer(q, h)
    assert out.centres.requires_grad
    out.context.sum().backward()
    assert layer.W_p.weight.grad.abs().sum() > 0 and layer.v_p.weight.grad.abs().sum() > 0


def test_window_mask_counts_two_d_plus_one():
    m = window_mask(20, 20, half_width=3)
    assert m[10].sum() == 7 and m[0].sum() == 4
    frac = window_mask(1, 10, torch.tensor([4.5]), half_width=2)
    assert frac[0].tolist() == [False, False, False, True, True, True, True, False, False, False]
    assert math.isclose(float(frac.sum()), 4)


def test_local_errors():
    with pytest.raises(ValueError, match="unknown window"):
        LocalAttention(4, window="local-x")
    with pytest.raises(ValueError, match="half_width"):
        LocalAttention(4, half_width=0)


def test_local_prepared_keys_give_the_same_attention():
    layer = LocalAttention(4, 6, window="local-p", half_width=2, score="concat")
    q, h = torch.randn(2, 3, 4), torch.randn(2, 8, 6)
    plain = layer(q, h)
    prepared = layer(q, h, prepared_key=layer.prepare_key(h))
    torch.testing.assert_close(prepared.weights, plain.weights)
    torch.testing.assert_close(prepared.centres, plain.centres)
