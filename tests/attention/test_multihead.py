"""MultiHeadAttention against torch.nn.MultiheadAttention, and its key/value cache."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnkit.attention import (
    KVCache,
    MultiHeadAttention,
    causal_mask,
    key_padding_mask,
    padding_mask,
    to_blocked,
)


def twin(d_model, num_heads, kdim=None, vdim=None, bias=True, dtype=torch.float32):
    """An attnkit MHA and a torch MHA holding the same weights."""
    ours = MultiHeadAttention(d_model, num_heads, kdim=kdim, vdim=vdim, bias=bias).to(dtype)
    ref = torch.nn.MultiheadAttention(
        d_model, num_heads, bias=bias, kdim=kdim, vdim=vdim, batch_first=True, dtype=dtype
    )
    with torch.no_grad():
        if ref._qkv_same_embed_dim:
            w = ref.in_proj_weight  # (3D, D): rows are W^Q, W^K, W^V
            w.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        else:
            ref.q_proj_weight.copy_(ours.q_proj.weight)
            ref.k_proj_weight.copy_(ours.k_proj.weight)
            ref.v_proj_weight.copy_(ours.v_proj.weight)
        if bias:
            ref.in_proj_bias.copy_(
                torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias])
            )
            ref.out_proj.bias.copy_(ours.out_proj.bias)
        ref.out_proj.weight.copy_(ours.out_proj.weight)
    return ours.eval(), ref.eval()


@given(
    b=st.integers(1, 3),
    heads=st.sampled_from([1, 2, 4]),
    head_dim=st.integers(1, 6),
    tq=st.integers(1, 7),
    tk=st.integers(1, 7),
    cross=st.booleans(),
    use_mask=st.booleans(),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    seed=st.integers(0, 1000),
)
def test_matches_torch_multihead(b, heads, head_dim, tq, tk, cross, use_mask, dtype, seed):
    torch.manual_seed(seed)
    d = heads * head_dim
    kdim, vdim = (d + 3, d + 1) if cross else (None, None)
    ours, ref = twin(d, heads, kdim, vdim, dtype=dtype)
    q = torch.randn(b, tq, d, dtype=dtype, requires_grad=True)
    k = torch.randn(b, tk, kdim or d, dtype=dtype, requires_grad=True)
    v = torch.randn(b, tk, vdim or d, dtype=dtype, requires_grad=True)
    keep = padding_mask(torch.randint(1, tk + 1, (b,)), tk) if use_mask else None  # (B, Tk)
    mask = key_padding_mask(keep) if use_mask else None  # (B, 1, 1, Tk), True = may attend
    out = ours(q, k, v, mask, need_weights=True)
    ref_ctx, ref_w = ref(
        q, k, v, key_padding_mask=to_blocked(keep), need_weights=True, average_attn_weights=False
    )
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else {}
    torch.testing.assert_close(out.context, ref_ctx, **tol)
    torch.testing.assert_close(out.weights, ref_w, **tol)
    # gradients through inputs and every parameter
    g_ours = torch.autograd.grad(out.context.square().sum(), (q, k, v, ours.q_proj.weight))
    g_ref = torch.autograd.grad(ref_ctx.square().sum(), (q, k, v))
    for a, r in zip(g_ours[:3], g_ref, strict=True):
        torch.testing.assert_close(a, r, **tol)
    in_w = ref.in_proj_weight if ref._qkv_same_embed_dim else ref.q_proj_weight
    (g_in,) = torch.autograd.grad(
        ref(q, k, v, key_padding_mask=to_blocked(keep))[0].square().sum(), in_w
    )
    torch.testing.assert_close(g_ours[3], g_in[:d], **tol)
    # the fused path (no weights) gives the same output
    fast = ours(q, k, v, mask)
    assert fast.weights is None and fast.path.startswith("fused")
    torch.testing.assert_close(fast.context, out.context, **tol)


def test_causal_mask_matches_torch_attn_mask():
    ours, ref = twin(8, 2)
    x = torch.randn(2, 5, 8)
    out = ours(x, x, x, causal_mask(5), need_weights=True)
    ref_ctx, ref_w = ref(x, x, x, attn_mask=to_blocked(causal_mask(5)), average_attn_weights=False)
    torch.testing.assert_close(out.context, ref_ctx)
    torch.testing.assert_close(out.weights, ref_w)
    assert torch.all(out.weights.triu(1) == 0)


@pytest.mark.parametrize("need_weights", [False, True])
def test_incremental_self_attention_cache_equals_full(need_weights):
    mha = MultiHeadAttention(12, 3).eval()
    x = torch.randn(2, 6, 12)
    full = mha(x, x, x, causal_mask(6), need_weights=True)
    cache, steps, weights = None, [], []
    for t in range(6):
        step = mha(
            x[:, t : t + 1],
            x[:, t : t + 1],
            x[:, t : t + 1],
            cache=cache,
            use_cache=True,
            need_weights=need_weights,
        )
        cache = step.cache
        steps.append(step.context)
        if need_weights:
            weights.append(step.weights[..., : t + 1])
    assert isinstance(cache, KVCache) and len(cache) == 6
    torch.testing.assert_close(torch.cat(steps, dim=1), full.context, atol=1e-6, rtol=1e-5)
    if need_weights:
        for t, w in enumerate(weights):
            torch.testing.assert_close(w, full.weights[:, :, t : t + 1, : t + 1])


def test_cache_with_chunk_and_causal_offset():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 7, 8)
    full = mha(x, x, x, causal_mask(7)).context
    first = mha(x[:, :4], x[:, :4], x[:, :4], causal_mask(4), use_cache=True)
    rest = mha(x[:, 4:], x[:, 4:], x[:, 4:], causal_mask(3, 7), cache=first.cache)
    torch.testing.assert_close(torch.cat([first.context, rest.context], 1), full, atol=1e-6, rtol=0)


def test_static_cross_attention_cache_reuses_memory_projection():
    mha = MultiHeadAttention(8, 2, kdim=5, vdim=5).eval()
    memory, q = torch.randn(2, 9, 5), torch.randn(2, 3, 8)
    full = mha(q, memory, memory, need_weights=True)
    first = mha(q[:, :1], memory, memory, use_cache=True)
    later = mha(q[:, 1:], cache=first.cache, static_kv=True, need_weights=True)
    torch.testing.assert_close(later.context, full.context[:, 1:])
    torch.testing.assert_close(later.weights, full.weights[:, :, 1:])


def test_self_attention_default_and_permutation_equivariance():
    mha = MultiHeadAttention(8, 4).eval()
    x = torch.randn(2, 5, 8, dtype=torch.float32)
    perm = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(mha(x).context, mha(x, x, x).context)
    torch.testing.assert_close(mha(x[:, perm]).context, mha(x).context[:, perm], atol=1e-6, rtol=0)


@pytest.mark.parametrize("normaliser", ["sparsemax", "entmax15"])
def test_sparse_heads_give_distributions_with_zeros(normaliser):
    mha = MultiHeadAttention(16, 4, normaliser=normaliser).eval()
    x = torch.randn(2, 10, 16) * 3
    out = mha(x, need_weights=True)
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(2, 4, 10))
    assert (out.weights == 0).any()
    # without weights the fused kernel cannot run either, and the output says why
    out = mha(x)
    assert out.path == "folded" and out.reason == f"normaliser {normaliser!r} is not softmax"


def test_learned_score_per_head():
    mha = MultiHeadAttention(8, 2, score="additive").eval()
    out = mha(torch.randn(2, 4, 8), need_weights=True)
    assert out.weights.shape == (2, 2, 4, 4)


def test_errors_are_clear():
    with pytest.raises(ValueError, match="not divisible"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="use LocationAttention"):
        MultiHeadAttention(8, 2, score="location")
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="key and value are needed"):
        mha(torch.randn(1, 2, 8), cache=None, key=torch.randn(1, 2, 8))
