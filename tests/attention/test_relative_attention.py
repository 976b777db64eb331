"""Relative attention (issue 21): the skewing equals the direct form, the score bias runs on
every path, cached decoding equals recomputation, and the invariances are properties:
a shift of every position changes nothing under a relative scheme, and only ``none`` keeps
self-attention permutation-equivariant."""

from __future__ import annotations

import pytest
import torch

from attnkit.attention import (
    MultiHeadAttention,
    attend,
    attend_chunked,
    causal_mask,
    key_padding_mask,
)
from attnkit.attention.positions import RELATIVE
from attnkit.attention.relative import (
    attend_shaw,
    relative_offsets,
    shaw_key_term,
    shaw_key_term_skewed,
    shaw_value_term,
    skew,
)
from attnkit.modules.positional import SinusoidalPositionalEncoding

D, H = 16, 4


@pytest.mark.parametrize("length", [1, 2, 5, 9])
@pytest.mark.parametrize("k", [1, 3, 16])
def test_skewing_equals_the_direct_form(length, k):
    """Huang et al. 2018 §3.4.1: Q E_r^T skewed into place = Shaw's eq. (4) term built from a
    (Tq, Tk, D) tensor of edge vectors."""
    g = torch.Generator().manual_seed(length * 100 + k)
    query = torch.randn(2, 3, length, 8, generator=g, dtype=torch.float64)
    table = torch.randn(2 * k + 1, 8, generator=g, dtype=torch.float64)
    direct = shaw_key_term(query, table, relative_offsets(length, length))
    assert torch.allclose(shaw_key_term_skewed(query, table), direct, atol=1e-12)


def test_skew_reads_each_row_shifted_by_its_query():
    rel = torch.arange(3 * 5).view(3, 5)  # column r holds offset r - 2
    assert skew(rel).tolist() == [[2, 3, 4], [6, 7, 8], [10, 11, 12]]  # rel[i, j - i + 2]
    with pytest.raises(ValueError, match="2L - 1"):
        skew(torch.zeros(3, 4))


def test_value_term_equals_the_sum_over_edges():
    """Shaw et al. eq. (3): sum_j alpha_ij a^V_ij, summed per clipped offset first."""
    g = torch.Generator().manual_seed(0)
    weights = torch.rand(2, 3, 4, 6, generator=g, dtype=torch.float64)
    table = torch.randn(5, 7, generator=g, dtype=torch.float64)  # k = 2
    offsets = relative_offsets(4, 6, query_start=2)
    edges = table[offsets.clamp(-2, 2) + 2]  # a^V_ij: (Tq, Tk, Dv)
    direct = torch.einsum("bhqk,qkd->bhqd", weights, edges)
    assert torch.allclose(shaw_value_term(weights, table, offsets), direct, atol=1e-12)


def test_attend_shaw_skewed_and_direct_agree_and_queries_can_start_later():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 6, 8, generator=g, dtype=torch.float64) for _ in range(3))
    keys, values = (torch.randn(7, 8, generator=g, dtype=torch.float64) for _ in range(2))
    opts = dict(key_table=keys, value_table=values)
    a = attend_shaw(q, k, v, causal_mask(6), skewed=True, **opts)
    b = attend_shaw(q, k, v, causal_mask(6), skewed=False, **opts)
    assert torch.allclose(a.context, b.context, atol=1e-12)
    last = attend_shaw(q[:, :, 5:], k, v, query_start=5, **opts)  # the last query alone
    assert torch.allclose(last.context, a.context[:, :, 5:], atol=1e-12)
    with pytest.raises(ValueError, match="skewing"):
        attend_shaw(q[:, :, 5:], k, v, query_start=5, skewed=True, **opts)


@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "folded"])
def test_bias_is_added_on_every_path(need_weights):
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, H, 5, 8, generator=g) for _ in range(3))
    bias = torch.randn(1, H, 5, 5, generator=g)
    mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    mask[1, :, 2] = False  # a query with no key: zero context, never NaN
    mask[0, :, :, 3] = False
    expected = (q @ k.transpose(-2, -1) / 8**0.5 + bias).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(expected, -1).nan_to_num(0.0)
    fast = attend(q, k, v, mask, bias=bias, need_weights=need_weights)
    readable = attend(q, k, v, mask, bias=bias, return_scores=True)
    chunked = attend_chunked(q, k, v, mask, bias=bias, chunk=2)
    for out in (fast, readable, chunked):
        assert torch.allclose(out.context, weights @ v, atol=1e-5)
    assert fast.path == ("folded" if need_weights else "fused")
    assert torch.allclose(readable.weights, weights, atol=1e-6)
    assert torch.allclose(chunked.weights, weights, atol=1e-6)


def test_bias_is_checked():
    q = torch.randn(1, 2, 3, 4)
    with pytest.raises(TypeError, match="float"):
        attend(q, q, q, bias=torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"does not broadcast to scores \(1, 2, 3, 3\)"):
        attend(q, q, q, bias=torch.zeros(3, 3, 3))


def make_attention(positions, seed=0):
    torch.manual_seed(seed)
    opts = {"relative_values": True} if positions == "shaw" else None
    attn = MultiHeadAttention(D, H, positions=positions, position_options=opts).eval()
    if positions == "shaw":
        torch.nn.init.normal_(attn.position.value_table)  # zero at init: make it count
    return attn


@pytest.mark.parametrize("positions", RELATIVE)
def test_cached_decoding_equals_full_recomputation(positions):
    attn = make_attention(positions)
    x = torch.randn(2, 7, D)
    with torch.no_grad():
        full = attn(x, mask=causal_mask(7), need_weights=True)
        cache, contexts = None, []
        for t in range(7):
            step = x[:, t : t + 1]
            out = attn(step, step, step, cache=cache, use_cache=True, need_weights=True)
            cache = out.cache
            contexts.append(out.context)
            assert torch.allclose(out.weights[:, :, 0], full.weights[:, :, t, : t + 1], atol=1e-6)
    assert torch.allclose(torch.cat(contexts, 1), full.context, atol=1e-5)


def encode_shifted(attn, x, shift, absolute=None):
    """Self-attention over ``x (1, T, D)`` placed at positions ``shift ..``: ``shift`` masked
    junk tokens come first, so every real position moves by ``shift``."""
    junk = torch.randn(1, shift, D, generator=torch.Generator().manual_seed(9))
    seq = torch.cat([junk, x], 1)  # (1, shift + T, D)
    if absolute is not None:
        seq = seq + absolute(seq.size(1))
    keep = torch.arange(seq.size(1)) >= shift  # the junk is never a key
    return attn(seq, mask=key_padding_mask(keep[None])).context[:, shift:]  # (1, T, D)


@pytest.mark.parametrize("positions", RELATIVE)
@pytest.mark.parametrize("shift", [1, 7, 40])
def test_a_shift_of_every_position_changes_nothing(positions, shift):
    """With positions as relations (and no absolute ones) only the offsets j - i matter; the
    shift here (40) also moves the tokens past Shaw's clipping distance (16) from position 0."""
    attn = make_attention(positions)
    x = torch.randn(1, 6, D)
    with torch.no_grad():
        base, moved = attn(x).context, encode_shifted(attn, x, shift)
    assert torch.allclose(base, moved, atol=1e-5)


def test_absolute_sinusoids_are_not_shift_invariant():
    """The contrast: sinusoids added to the input make the output depend on where it starts."""
    attn, pe = make_attention(None), SinusoidalPositionalEncoding(D)
    x = torch.randn(1, 6, D)
    with torch.no_grad():
        base, moved = encode_shifted(attn, x, 0, pe), encode_shifted(attn, x, 7, pe)
    assert (base - moved).abs().max() > 1e-2


@pytest.mark.parametrize("positions", ["none", *RELATIVE])
def test_only_no_positions_is_permutation_equivariant(positions):
    """Self-attention without positions is permutation-equivariant (Vaswani et al. 2017 §3.5
    is why positions exist); each relative scheme breaks it. ALiBi's symmetric bias -m|j - i|
    keeps the equivariance to reversing the sequence, which the signed schemes break too."""
    attn = make_attention(None if positions == "none" else positions)
    x = torch.randn(1, 8, D, generator=torch.Generator().manual_seed(3))
    perm = torch.tensor([3, 0, 7, 1, 6, 2, 5, 4])
    reverse = torch.arange(7, -1, -1)
    with torch.no_grad():
        out = attn(x).context  # (1, T, D)
        permuted = attn(x[:, perm]).context
        reversed_ = attn(x[:, reverse]).context
    assert torch.allclose(permuted, out[:, perm], atol=1e-5) == (positions == "none")
    assert torch.allclose(reversed_, out[:, reverse], atol=1e-5) == (positions in ("none", "alibi"))


def test_relative_positions_are_refused_on_a_static_memory():
    attn = make_attention("rope")
    memory = attn.project_kv(torch.randn(1, 4, D), torch.randn(1, 4, D))
    with pytest.raises(ValueError, match="self-attention"):
        attn(torch.randn(1, 1, D), cache=memory, static_kv=True)


def test_unknown_scheme_and_odd_rope_width_are_named():
    with pytest.raises(ValueError, match="unknown positions 'relative'"):
        MultiHeadAttention(D, H, positions="relative")
    with pytest.raises(ValueError, match="even head width"):
        MultiHeadAttention(12, 4, positions="rope")  # Dh = 3


def test_gradients_reach_the_learned_tables():
    for positions, name in (("shaw", "key_table"), ("t5", "table")):
        attn = make_attention(positions).train()
        attn(torch.randn(2, 5, D)).context.pow(2).sum().backward()
        grad = getattr(attn.position, name).grad
        assert grad is not None and grad.abs().sum() > 0, positions


def test_rotary_table_grows_and_equals_the_pure_rotation():
    from attnkit.attention.positions import RotaryPositions
    from attnkit.attention.rotary import rotate

    scheme, x = RotaryPositions(), torch.randn(1, 2, 3, 8, dtype=torch.float64)
    for start in (0, 62, 200, 5):  # within the first table, across its end, far beyond it
        expected = rotate(x, torch.arange(start, start + 3))
        assert torch.allclose(scheme.rotate(x, start), expected, atol=1e-12)
    assert scheme._table[0].shape == (256, 4)  # 64 rows, doubled to 128, then to 256
