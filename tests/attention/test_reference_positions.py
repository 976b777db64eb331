"""The NumPy reference of the relative position schemes equals the torch code (Shaw, T5, ALiBi,
RoPE), and both agree with values worked out by hand from the papers."""

import math

import numpy as np
import pytest
import torch

from attnkit.attention import reference_numpy_positions as ref
from attnkit.attention.position_bias import alibi_slopes, attend_alibi, attend_t5, t5_buckets
from attnkit.attention.relative import attend_shaw, clipped_index, relative_offsets
from attnkit.attention.rotary import attend_rope, rotate

ATOL = 1e-10
MASKS = [None, "random", "fully_masked_row"]


def make_mask(kind, rng, b, tq, tk):
    """``(B, 1, Tq, Tk)`` bool (shared by the heads), or None."""
    if kind is None:
        return None
    mask = rng.random((b, 1, tq, tk)) < 0.6
    mask[..., rng.integers(tk)] = True  # every row keeps a key ...
    if kind == "fully_masked_row":
        mask[0, 0, tq - 1, :] = False  # ... except this one
    return mask


def inputs(seed, b, h, tq, tk, d, dv=None):
    """Random float64 ``q (B, H, Tq, D)``, ``k (B, H, Tk, D)``, ``v (B, H, Tk, Dv)``."""
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(b, h, tq, d)) * 2, rng.normal(size=(b, h, tk, d)) * 2
    v = rng.normal(size=(b, h, tk, dv or d))
    return rng, q, k, v


def t(a):
    return None if a is None else torch.from_numpy(np.ascontiguousarray(a))


def assert_same(reference, out, mask_kind):
    context, weights = reference
    np.testing.assert_allclose(weights, out.weights.numpy(), rtol=0, atol=ATOL)
    np.testing.assert_allclose(context, out.context.numpy(), rtol=0, atol=ATOL)
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(context))
    if mask_kind == "fully_masked_row":
        assert np.all(weights[0, :, -1] == 0) and np.all(context[0, :, -1] == 0)


# ---------------------------------------------------------------------- Shaw et al. 2018

SHAW_CASES = [  # (Tq, Tk, query_start, k, skewed): k below the length clips
    (5, 5, 0, 2, True),
    (5, 5, 0, 2, False),
    (7, 7, 0, 10, True),  # k beyond the length: nothing clipped
    (1, 6, 5, 2, False),  # one decoding step with 5 cached keys
    (3, 8, 4, 1, False),
    (6, 4, 2, 3, False),  # more queries than keys
]


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("with_values", [False, True])
@pytest.mark.parametrize(("tq", "tk", "query_start", "k_clip", "skewed"), SHAW_CASES)
def test_shaw_equals_numpy_reference(tq, tk, query_start, k_clip, skewed, with_values, mask_kind):
    rng, q, k, v = inputs(tq * 100 + tk * 10 + k_clip, 2, 3, tq, tk, 4, dv=3)
    key_table = rng.normal(size=(2 * k_clip + 1, 4))
    value_table = rng.normal(size=(2 * k_clip + 1, 3)) if with_values else None
    mask = make_mask(mask_kind, rng, 2, tq, tk)
    out = attend_shaw(
        t(q),
        t(k),
        t(v),
        t(mask),
        key_table=t(key_table),
        value_table=t(value_table),
        query_start=query_start,
        skewed=skewed,
    )
    reference = ref.shaw_attention(q, k, v, key_table, value_table, mask, query_start)
    assert_same(reference, out, mask_kind)


def test_shaw_one_head_without_batch_axes():
    rng, q, k, v = inputs(3, 1, 1, 4, 4, 6)
    table = rng.normal(size=(3, 6))
    context, weights = ref.shaw_attention(q[0, 0], k[0, 0], v[0, 0], table, table)
    out = attend_shaw(t(q), t(k), t(v), key_table=t(table), value_table=t(table))
    np.testing.assert_allclose(context, out.context[0, 0].numpy(), rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, out.weights[0, 0].numpy(), rtol=0, atol=ATOL)


def test_shaw_clipped_index_by_hand():
    # k = 1, three queries and keys: offsets j - i are [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]];
    # clipped to [-1, 1] and shifted by k = 1 into rows 0 .. 2 of the table:
    expected = [[1, 2, 2], [0, 1, 2], [0, 0, 1]]
    np.testing.assert_array_equal(ref.clipped_index_matrix(3, 3, 1), expected)
    np.testing.assert_array_equal(clipped_index(relative_offsets(3, 3), 1).numpy(), expected)
    # a query at position 2 (query_start 2) sees keys 0, 1, 2 at offsets -2, -1, 0: rows 0, 0, 1
    np.testing.assert_array_equal(ref.clipped_index_matrix(1, 3, 1, query_start=2), [[0, 0, 1]])
    np.testing.assert_array_equal(clipped_index(relative_offsets(1, 3, 2), 1).numpy(), [[0, 0, 1]])


def test_shaw_single_key_by_hand():
    # One key: the weight is 1, so z = v + a^V_00 = v + value_table[k] (offset 0 is row k = 1).
    q, k, v = np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]), np.array([[5.0, 6.0]])
    value_table = np.array([[0.0, 0.0], [10.0, 20.0], [0.0, 0.0]])
    context, weights = ref.shaw_attention(q, k, v, np.zeros((3, 2)), value_table)
    np.testing.assert_array_equal(weights, [[1.0]])
    np.testing.assert_array_equal(context, [[15.0, 26.0]])


# ------------------------------------------------------------------------ T5 (Raffel et al.)


def test_t5_buckets_by_hand():
    # 32 buckets, bidirectional: 16 per direction, keys at or before the query (j - i <= 0) in
    # 0 .. 15, keys after it in 16 .. 31. Within a half, distances 0 .. 7 get a bucket each;
    # a distance d >= 8 gets 8 + floor(log(d / 8) / log(128 / 8) * 8) = 8 + floor(2 log2(d / 8)):
    #   d = 8:    8 + floor(2 * 0) = 8
    #   d = 127:  log2(127 / 8) = log2(15.875) = 3.989, so 8 + floor(7.977) = 15
    #   d = 1000: log2(125) = 6.97, so 8 + floor(13.9) = 21, capped at 15
    by_hand = {0: 0, -1: 1, 1: 16 + 1, -7: 7, -8: 8, -127: 15, -1000: 15, 7: 16 + 7, 8: 16 + 8}
    by_hand[127] = 16 + 15
    for offset, bucket in by_hand.items():
        assert ref.t5_bucket(offset) == bucket, offset
    offsets = torch.tensor(list(by_hand))
    assert t5_buckets(offsets).tolist() == list(by_hand.values())


def test_t5_unidirectional_buckets_by_hand():
    # One direction: all 32 buckets for keys at or before the query; keys after it share 0.
    # d < 16 exact; d >= 16: 16 + floor(log(d / 16) / log(128 / 16) * 16) = 16 + floor(16/3
    # log2(d / 16)): d = 32 -> 16 + floor(5.33) = 21; d = 64 -> 16 + floor(10.67) = 26.
    by_hand = {5: 0, 0: 0, -15: 15, -16: 16, -32: 21, -64: 26, -128: 31, -5000: 31}
    for offset, bucket in by_hand.items():
        assert ref.t5_bucket(offset, bidirectional=False) == bucket, offset
    offsets = torch.tensor(list(by_hand))
    assert t5_buckets(offsets, bidirectional=False).tolist() == list(by_hand.values())


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (8, 20), (16, 9), (6, 50)])
def test_t5_bucket_equals_torch(num_buckets, max_distance, bidirectional):
    offsets = list(range(-300, 301))
    expected = t5_buckets(torch.tensor(offsets), num_buckets, max_distance, bidirectional)
    buckets = [ref.t5_bucket(o, num_buckets, max_distance, bidirectional) for o in offsets]
    assert buckets == expected.tolist()


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("tq", "tk", "query_start", "heads"), [(5, 5, 0, 8), (2, 9, 7, 3)])
def test_t5_equals_numpy_reference(tq, tk, query_start, heads, bidirectional, mask_kind):
    rng, q, k, v = inputs(tq + tk + heads, 2, heads, tq, tk, 4)
    table = rng.normal(size=(8, heads))  # 8 buckets up to distance 6: most offsets share some
    mask = make_mask(mask_kind, rng, 2, tq, tk)
    options = {"max_distance": 6, "bidirectional": bidirectional, "query_start": query_start}
    out = attend_t5(t(q), t(k), t(v), t(mask), table=t(table), **options)
    assert_same(ref.t5_attention(q, k, v, table, mask, **options), out, mask_kind)


# ------------------------------------------------------------------ ALiBi (Press et al.)


def test_alibi_slopes_by_hand():
    # Press et al. 2022 §3: 8 heads start at 2^(-8/8) = 1/2 with ratio 1/2.
    eight = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    assert ref.alibi_slopes(8) == pytest.approx(eight, rel=1e-15)
    assert alibi_slopes(8).tolist() == pytest.approx(eight, rel=1e-7)
    # 6 heads (not a power of 2): the 4-head slopes 2^-2, 2^-4, 2^-6, 2^-8, then every other
    # slope of 8 heads (1/2, 1/8, 1/32, 1/128), the first two of them.
    six = [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]
    assert ref.alibi_slopes(6) == pytest.approx(six, rel=1e-15)
    assert alibi_slopes(6).tolist() == pytest.approx(six, rel=1e-7)
    assert ref.alibi_slopes(1) == [2.0**-8]


@pytest.mark.parametrize("num_heads", range(1, 17))
def test_alibi_slopes_equal_torch(num_heads):
    expected = alibi_slopes(num_heads).tolist()
    assert ref.alibi_slopes(num_heads) == pytest.approx(expected, rel=1e-6)  # torch: float32


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize(("tq", "tk", "query_start"), [(5, 5, 0), (3, 7, 4), (1, 6, 5)])
@pytest.mark.parametrize("heads", [6, 8])
def test_alibi_equals_numpy_reference(heads, tq, tk, query_start, mask_kind):
    rng, q, k, v = inputs(tq + tk + heads, 2, heads, tq, tk, 4)
    mask = make_mask(mask_kind, rng, 2, tq, tk)
    out = attend_alibi(t(q), t(k), t(v), t(mask), query_start=query_start)
    assert_same(ref.alibi_attention(q, k, v, mask, query_start=query_start), out, mask_kind)


def test_alibi_bias_by_hand():
    # One head of slope 1/2, a query at position 1 and keys 0, 1, 2, 3: -|j - 1| / 2.
    np.testing.assert_array_equal(
        ref.alibi_bias_matrix([0.5], 1, 4, query_start=1), [[[-0.5, 0.0, -0.5, -1.0]]]
    )


# ------------------------------------------------------------------------ RoPE (Su et al.)


@pytest.mark.parametrize("m", [0, 1, 2, 5, -3])
def test_rope_turns_a_unit_vector_by_m(m):
    # d = 2: one pair with theta_0 = base^0 = 1, so position m turns (1, 0) by the angle m.
    expected = [[math.cos(m), math.sin(m)]]
    np.testing.assert_allclose(ref.rope_rotate([[1.0, 0.0]], [m]), expected, rtol=0, atol=1e-15)
    turned = rotate(torch.tensor([[1.0, 0.0]], dtype=torch.float64), torch.tensor([m]))
    np.testing.assert_allclose(turned.numpy(), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize(("m", "n"), [(0, 0), (1, 4), (7, 2), (3, 3)])
def test_rope_score_depends_on_the_offset(m, n):
    # (R_m q) . (R_n k) = q . R_(n - m) k, with R_(n - m) written out here by hand (d = 2).
    q, k = np.array([0.3, -1.2]), np.array([2.0, 0.7])
    c, s = math.cos(n - m), math.sin(n - m)
    expected = q @ np.array([c * k[0] - s * k[1], s * k[0] + c * k[1]])
    score = ref.rope_rotate(q[None], [m])[0] @ ref.rope_rotate(k[None], [n])[0]
    assert score == pytest.approx(expected, abs=1e-14)
    tq, tk = torch.from_numpy(q[None]), torch.from_numpy(k[None])
    score = (rotate(tq, torch.tensor([m])) * rotate(tk, torch.tensor([n]))).sum().item()
    assert score == pytest.approx(expected, abs=1e-14)


@pytest.mark.parametrize("base", [10000.0, 10.0])
def test_rope_rotate_equals_torch(base):
    x = np.random.default_rng(0).normal(size=(2, 3, 5, 8))
    positions = [0, 1, 4, 9, 30]
    expected = rotate(t(x), torch.tensor(positions), base).numpy()
    np.testing.assert_allclose(ref.rope_rotate(x, positions, base), expected, rtol=0, atol=ATOL)


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize(("tq", "tk", "query_start", "key_start"), [(5, 5, 0, 0), (2, 6, 6, 3)])
def test_rope_equals_numpy_reference(tq, tk, query_start, key_start, mask_kind):
    rng, q, k, v = inputs(tq + tk, 2, 8, tq, tk, 6)
    mask = make_mask(mask_kind, rng, 2, tq, tk)
    options = {"query_start": query_start, "key_start": key_start, "base": 100.0}
    out = attend_rope(t(q), t(k), t(v), t(mask), **options)
    assert_same(ref.rope_attention(q, k, v, mask, **options), out, mask_kind)


def test_rope_rejects_an_odd_width():
    with pytest.raises(ValueError, match="even"):
        ref.rope_rotate(np.ones((2, 3)), [0, 1])


# ------------------------------------------------- the fused kernel (no weights) takes the bias


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("scheme", ["shaw", "t5", "alibi", "rope"])
def test_fused_path_equals_numpy_reference(scheme, mask_kind):
    rng, q, k, v = inputs(11, 2, 4, 5, 5, 6)
    mask = make_mask(mask_kind, rng, 2, 5, 5)
    table = rng.normal(size=(5, 6) if scheme == "shaw" else (8, 4))
    run = {
        "shaw": (attend_shaw, {"key_table": t(table)}, ref.shaw_attention, (table,)),
        "t5": (attend_t5, {"table": t(table), "max_distance": 6}, ref.t5_attention, (table,)),
        "alibi": (attend_alibi, {}, ref.alibi_attention, ()),
        "rope": (attend_rope, {}, ref.rope_attention, ()),
    }
    attend_torch, options, attend_numpy, args = run[scheme]
    out = attend_torch(t(q), t(k), t(v), t(mask), need_weights=False, **options)
    if scheme == "t5":
        context, _ = attend_numpy(q, k, v, *args, mask, max_distance=6)
    else:
        context, _ = attend_numpy(q, k, v, *args, mask=mask)
    assert out.weights is None and out.path == "fused"
    np.testing.assert_allclose(context, out.context.numpy(), rtol=0, atol=ATOL)
