"""Sliding-window causal attention (Beltagy et al. 2020; Jiang et al. 2023) with attention sinks
(Xiao et al. 2023): the mask against its definition, the rolling KV cache against full
recomputation under the mask, and a NumPy reference with absolute rotary positions."""

import numpy as np
import pytest
import torch

from attnkit.attention import (
    KVCache,
    MultiHeadAttention,
    causal_mask,
    sliding_window_mask,
)
from attnkit.attention import reference_numpy as ref_np
from attnkit.attention.reference_numpy_positions import rope_rotate

D, HEADS = 16, 4


def window_by_definition(tq, tk, window, sinks):
    """``i - W < j <= i`` or ``j < S`` (and ``j <= i``), one entry at a time; queries are the
    last ``tq`` of ``tk`` positions."""
    mask = np.zeros((tq, tk), dtype=bool)
    for row in range(tq):
        i = tk - tq + row
        for j in range(tk):
            mask[row, j] = j <= i and (i - window < j or j < sinks)
    return mask


@pytest.mark.parametrize("tq, tk", [(1, 1), (5, 5), (3, 9), (1, 8)])
@pytest.mark.parametrize("window", [1, 2, 4, 20])
@pytest.mark.parametrize("sinks", [0, 1, 3])
def test_mask_matches_its_definition(tq, tk, window, sinks):
    mask = sliding_window_mask(tq, tk, window=window, sinks=sinks)
    np.testing.assert_array_equal(mask.numpy(), window_by_definition(tq, tk, window, sinks))
    if window >= tk:
        assert torch.equal(mask, causal_mask(tq, tk))  # a window wider than the text: causal


def test_mask_errors():
    with pytest.raises(ValueError, match="window must be >= 1"):
        sliding_window_mask(3, window=0)
    with pytest.raises(ValueError, match="tk >= tq"):
        sliding_window_mask(4, 3, window=2)


def layer(positions=None, kv_heads=None, seed=0):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(D, HEADS, positions=positions, kv_heads=kv_heads)
    return mha.eval().double()


@pytest.mark.parametrize("positions", [None, "rope", "alibi"])
def test_window_argument_equals_the_mask(positions):
    mha = layer(positions)
    x = torch.randn(2, 10, D, dtype=torch.float64)
    for sinks in (0, 2):
        mask = sliding_window_mask(10, window=3, sinks=sinks)
        expected = mha(x, mask=mask, need_weights=True)
        out = mha(x, window=3, sinks=sinks, need_weights=True)
        torch.testing.assert_close(out.context, expected.context)
        torch.testing.assert_close(out.weights, expected.weights)
        assert torch.all(out.weights[..., ~mask] == 0)  # nothing outside the window
        assert mha(x, window=3, sinks=sinks).path == "fused"
        torch.testing.assert_close(mha(x, window=3, sinks=sinks).context, out.context)


CASES = [  # positions, kv_heads, window, sinks
    (None, None, 3, 0),
    (None, 2, 4, 2),
    ("rope", None, 3, 0),
    ("rope", 1, 4, 2),
    ("rope", 2, 1, 1),
    ("alibi", 2, 3, 0),
    ("t5", None, 2, 0),
]


@pytest.mark.parametrize("positions, kv_heads, window, sinks", CASES)
def test_rolling_cache_equals_full_recomputation(positions, kv_heads, window, sinks):
    mha = layer(positions, kv_heads)
    t_max = 12
    x = torch.randn(2, t_max, D, dtype=torch.float64)
    full = mha(x, mask=sliding_window_mask(t_max, window=window, sinks=sinks), need_weights=True)
    cache, steps = None, []
    for t in range(t_max):
        step = mha(x[:, t : t + 1], cache=cache, use_cache=True, window=window, sinks=sinks)
        cache = step.cache
        steps.append(step.context)
        kept = min(t + 1, sinks + window - 1)  # the sinks and the last W - 1 positions
        assert len(cache) == kept and cache.seen == t + 1
        assert cache.key.shape == (2, kv_heads or HEADS, kept, D // HEADS)
        assert step.path == "fused"  # no mask needed: the cache is the window
    torch.testing.assert_close(torch.cat(steps, 1), full.context)
    expected = [p for p in range(t_max) if p < sinks or p > t_max - window]
    assert cache.positions().tolist() == expected[: len(cache)]


@pytest.mark.parametrize("positions", [None, "rope"])
def test_weights_of_a_step_are_the_full_rows_kept_keys(positions):
    mha = layer(positions, kv_heads=2)
    x = torch.randn(1, 9, D, dtype=torch.float64)
    full = mha(x, mask=sliding_window_mask(9, window=3, sinks=1), need_weights=True)
    prefix = mha(x[:, :6], use_cache=True, window=3, sinks=1)  # a prompt, then steps
    cache = prefix.cache
    torch.testing.assert_close(prefix.context, full.context[:, :6])
    for t in range(6, 9):
        step = mha(
            x[:, t : t + 1], cache=cache, use_cache=True, window=3, sinks=1, need_weights=True
        )
        keys = torch.cat([cache.positions(), torch.tensor([t])])  # the keys it attended to
        torch.testing.assert_close(step.weights[:, :, 0], full.weights[:, :, t, keys])
        torch.testing.assert_close(step.context, full.context[:, t : t + 1])
        cache = step.cache


def test_numpy_reference_with_absolute_rotary_positions():
    """Project, rotate queries and keys at their absolute positions (Su et al. 2021, eq. (34)),
    repeat the key/value heads, mask the window: NumPy throughout, against cached decoding."""
    mha = layer("rope", kv_heads=2)
    t_max, window, sinks = 10, 3, 2
    x = torch.randn(1, t_max, D, dtype=torch.float64)
    params = {name: p.detach().numpy() for name, p in mha.state_dict().items()}

    def heads(name, h):
        y = ref_np.linear(x.numpy(), params[f"{name}.weight"], params[f"{name}.bias"])
        return ref_np.split_heads(y, h)  # (B, h, T, Dh)

    q = rope_rotate(heads("q_proj", HEADS), range(t_max))
    k = np.repeat(rope_rotate(heads("k_proj", 2), range(t_max)), 2, axis=1)  # (B, H, T, Dh)
    v = np.repeat(heads("v_proj", 2), 2, axis=1)
    mask = window_by_definition(t_max, t_max, window, sinks)
    context = ref_np.attention(q, k, v, mask).context  # (B, H, T, Dh)
    merged = context.transpose(0, 2, 1, 3).reshape(1, t_max, D)  # (B, T, D)
    expected = ref_np.linear(merged, params["out_proj.weight"], params["out_proj.bias"])
    cache, steps = None, []
    for t in range(t_max):
        step = mha(x[:, t : t + 1], cache=cache, use_cache=True, window=window, sinks=sinks)
        cache, steps = step.cache, steps + [step.context]
    np.testing.assert_allclose(torch.cat(steps, 1).detach().numpy(), expected, atol=1e-12)


def test_keep_last_counts_what_it_dropped():
    key = torch.arange(10.0).view(1, 1, 10, 1)  # (B, H, T, Dh): the value is the position
    cache = KVCache(key, key.clone())
    assert cache.keep_last(20) is cache and cache.seen == 10
    kept = cache.keep_last(3, sinks=2)
    assert kept.key.flatten().tolist() == [0, 1, 7, 8, 9]  # the sinks 0, 1 and the last 3
    assert kept.positions().tolist() == [0, 1, 7, 8, 9]
    assert kept.seen == 10 and len(cache) == 10  # the original is unchanged
    grown = kept.append(torch.full((1, 1, 1, 1), 10.0), torch.zeros(1, 1, 1, 1))
    again = grown.keep_last(3, sinks=2)
    assert again.positions().tolist() == again.key.flatten().tolist() == [0, 1, 8, 9, 10]
    rows = again.select_rows(torch.tensor([0, 0]))
    assert rows.seen == 11 and rows.positions().tolist() == [0, 1, 8, 9, 10]
    tail = cache.keep_last(4)  # without sinks: a view, no copy
    assert tail.positions().tolist() == [6, 7, 8, 9]
    assert tail.key.data_ptr() == key[..., 6:, :].data_ptr()
    with pytest.raises(ValueError, match="keep the same sinks=2"):
        kept.keep_last(3, sinks=0)


def test_errors_say_what_to_change():
    mha = layer("alibi")
    x = torch.randn(1, 6, D, dtype=torch.float64)
    cache = mha(x, use_cache=True, window=2, sinks=1).cache  # dropped positions after a sink
    with pytest.raises(ValueError, match="positions='rope'"):
        mha(x[:, :1], cache=cache, window=2, sinks=1)
    with pytest.raises(ValueError, match="window >= 1"):
        mha(x, window=0)
    cross = MultiHeadAttention(D, HEADS).eval().double()
    static = cross.project_kv(x, x)
    with pytest.raises(ValueError, match="causal self-attention"):
        cross(x, cache=static, static_kv=True, window=2)
