"""Grouped-query and multi-query attention (kv_heads) against references that repeat the key and
value heads explicitly: plain torch, a full MultiHeadAttention with the weights copied per
group, and the NumPy reference; their KV cache against full recomputation."""

import numpy as np
import pytest
import torch

from attnkit.attention import MultiHeadAttention, attend, causal_mask, key_padding_mask
from attnkit.attention import reference_numpy as ref_np
from attnkit.attention.grouped import head_groups, repeat_kv_heads

HEADS, D = 4, 16  # Dh = 4


def gqa(kv_heads, positions=None, bias=True, seed=0, **options):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(D, HEADS, kv_heads=kv_heads, positions=positions, bias=bias, **options)
    return mha.eval().double()


def plain_torch(mha, x, mask=None):
    """Grouped-query attention written out: project, split, take for query head h the key and
    value head h // G by indexing, softmax(q k^T / sqrt(Dh)) v, concatenate, W^O."""
    b, t, _ = x.shape
    h, hk, dh = mha.num_heads, mha.kv_heads, mha.head_dim
    q = (x @ mha.q_proj.weight.T + mha.q_proj.bias).view(b, t, h, dh).transpose(1, 2)
    k = (x @ mha.k_proj.weight.T + mha.k_proj.bias).view(b, t, hk, dh).transpose(1, 2)
    v = (x @ mha.v_proj.weight.T + mha.v_proj.bias).view(b, t, hk, dh).transpose(1, 2)
    which = torch.tensor([head // (h // hk) for head in range(h)])  # kv head of each query head
    k, v = k[:, which], v[:, which]  # (B, H, T, Dh) each
    scores = q @ k.transpose(-2, -1) / dh**0.5  # (B, H, T, T)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)  # (B, H, T, T)
    context = (weights @ v).transpose(1, 2).reshape(b, t, h * dh)  # (B, T, D)
    return context @ mha.out_proj.weight.T + mha.out_proj.bias, weights


def expanded(mha, positions=None, **options):
    """A full MultiHeadAttention (kv_heads = heads) whose key/value head h holds the weights of
    head h // G of ``mha``: the same attention, computed the original way."""
    full = MultiHeadAttention(D, HEADS, positions=positions, **options).eval().double()
    groups, dh = HEADS // mha.kv_heads, mha.head_dim
    state = mha.state_dict()
    for name in ("k_proj", "v_proj"):
        w = state[f"{name}.weight"].view(mha.kv_heads, dh, D)  # (H_kv, Dh, D)
        state[f"{name}.weight"] = w.repeat_interleave(groups, 0).reshape(D, D)  # (H * Dh, D)
        bias = state[f"{name}.bias"].view(mha.kv_heads, dh)  # (H_kv, Dh)
        state[f"{name}.bias"] = bias.repeat_interleave(groups, 0).reshape(D)
    full.load_state_dict(state)
    return full


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
@pytest.mark.parametrize("masked", [False, True])
def test_matches_plain_torch_and_the_expanded_model(kv_heads, masked):
    mha = gqa(kv_heads)
    assert mha.k_proj.out_features == kv_heads * mha.head_dim
    x = torch.randn(2, 6, D, dtype=torch.float64, requires_grad=True)
    mask = causal_mask(6) if masked else None
    out = mha(x, mask=mask, need_weights=True)
    context, weights = plain_torch(mha, x, mask)
    torch.testing.assert_close(out.context, context)
    torch.testing.assert_close(out.weights, weights)
    assert out.weights.shape == (2, HEADS, 6, 6)  # per query head
    full = expanded(mha)(x, mask=mask, need_weights=True)
    torch.testing.assert_close(out.context, full.context)
    torch.testing.assert_close(out.weights, full.weights)
    (g_ours,) = torch.autograd.grad(out.context.square().sum(), x)
    (g_ref,) = torch.autograd.grad(context.square().sum(), x)
    torch.testing.assert_close(g_ours, g_ref)


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_matches_the_numpy_reference(kv_heads):
    mha = gqa(kv_heads)
    x = torch.randn(2, 5, D, dtype=torch.float64)
    params = {name: p.detach().numpy() for name, p in mha.state_dict().items()}
    mask = causal_mask(5).numpy()
    ref = ref_np.multi_head_attention(x, x, x, params, HEADS, mask, kv_heads=kv_heads)
    out = mha(x, mask=causal_mask(5), need_weights=True)
    assert ref.k_heads.shape == (2, kv_heads, 5, D // HEADS)
    np.testing.assert_allclose(out.context.detach().numpy(), ref.output, atol=1e-12)
    np.testing.assert_allclose(out.weights.detach().numpy(), ref.weights, atol=1e-12)


def test_kv_heads_equal_to_heads_is_the_existing_layer():
    torch.manual_seed(3)
    before = MultiHeadAttention(D, HEADS).eval()
    torch.manual_seed(3)
    now = MultiHeadAttention(D, HEADS, kv_heads=HEADS).eval()
    x = torch.randn(2, 7, D)
    for name, p in before.state_dict().items():
        assert torch.equal(p, now.state_dict()[name])
    for need_weights in (False, True):
        a = before(x, mask=causal_mask(7), need_weights=need_weights)
        b = now(x, mask=causal_mask(7), need_weights=need_weights)
        assert torch.equal(a.context, b.context) and a.path == b.path


@pytest.mark.parametrize("kv_heads", [1, 2])
@pytest.mark.parametrize("positions", [None, "rope", "alibi"])
def test_cached_decoding_equals_full_recomputation(kv_heads, positions):
    mha = gqa(kv_heads, positions)
    x = torch.randn(2, 7, D, dtype=torch.float64)
    full = mha(x, mask=causal_mask(7), need_weights=True)
    cache, steps = None, []
    for t in range(7):
        step = mha(x[:, t : t + 1], cache=cache, use_cache=True, need_weights=t % 2 == 0)
        cache = step.cache
        steps.append(step.context)
        if t % 2 == 0:
            torch.testing.assert_close(step.weights, full.weights[:, :, t : t + 1, : t + 1])
        # the memory saving: the cache holds H_kv heads, not H
        assert cache.key.shape == cache.value.shape == (2, kv_heads, t + 1, D // HEADS)
    torch.testing.assert_close(torch.cat(steps, 1), full.context)


@pytest.mark.parametrize("kv_heads", [1, 2])
@pytest.mark.parametrize("positions", [None, "alibi", "t5"])
def test_fast_path_equals_readable_path(kv_heads, positions):
    options = {"position_options": {"causal": True}}
    mha = gqa(kv_heads, positions, **options)
    x = torch.randn(3, 9, D, dtype=torch.float64)
    keep = torch.ones(3, 9, dtype=torch.bool)
    keep[0, :4] = False  # padding in front of the first row
    mask = causal_mask(9) & key_padding_mask(keep)  # (B, 1, Tq, Tk)
    fast = mha(x, mask=mask)
    slow = mha(x, mask=mask, need_weights=True)
    assert fast.path == "fused" and slow.path != "fused"
    torch.testing.assert_close(fast.context, slow.context)
    torch.testing.assert_close(
        fast.context, expanded(mha, positions, **options)(x, mask=mask).context
    )


def test_attend_takes_fewer_key_value_heads_on_every_path():
    torch.manual_seed(0)
    q = torch.randn(2, 6, 5, 8, dtype=torch.float64)  # (B, H, Tq, D)
    k, v = (
        torch.randn(2, 3, 7, 8, dtype=torch.float64),
        torch.randn(2, 3, 7, 4, dtype=torch.float64),
    )
    mask = torch.rand(2, 1, 5, 7) > 0.3
    expected = attend(q, repeat_kv_heads(k, 2), repeat_kv_heads(v, 2), mask, path="readable")
    for options in ({"need_weights": False}, {"need_weights": True}, {"path": "readable"}):
        out = attend(q, k, v, mask, **options)
        torch.testing.assert_close(out.context, expected.context)
    assert attend(q, k, v, mask, need_weights=False).path == "fused"
    explicit = k[:, [0, 0, 1, 1, 2, 2]]  # query heads 0, 1 read key head 0; 2, 3 head 1; ...
    torch.testing.assert_close(repeat_kv_heads(k, 2), explicit)


def test_bad_kv_heads_are_refused_with_what_to_change():
    with pytest.raises(ValueError, match=r"kv_heads=3 must divide the 4 query heads.*\[1, 2, 4\]"):
        MultiHeadAttention(16, 4, kv_heads=3)
    with pytest.raises(ValueError, match="kv_heads=0"):
        MultiHeadAttention(16, 4, kv_heads=0)
    with pytest.raises(ValueError, match="kv_heads=8"):
        head_groups(4, 8)
    q, k = torch.randn(1, 4, 2, 8), torch.randn(1, 3, 2, 8)
    with pytest.raises(ValueError, match="kv_heads=3 must divide"):
        attend(q, k, k)
    with pytest.raises(ValueError, match="different head counts"):
        attend(q, torch.randn(1, 2, 2, 8), torch.randn(1, 1, 2, 8))


def test_static_cross_attention_cache_has_kv_heads_and_serves_beams():
    torch.manual_seed(1)
    mha = MultiHeadAttention(D, HEADS, kdim=6, vdim=6, kv_heads=2).eval()
    memory, q = torch.randn(2, 5, 6), torch.randn(2, 3, D)
    static = mha.project_kv(memory, memory)
    assert static.key.shape == (2, 2, 5, D // HEADS)
    full = mha(q, memory, memory, need_weights=True)
    again = mha(q, cache=static, static_kv=True, need_weights=True)
    torch.testing.assert_close(again.context, full.context)
    beams = q.repeat_interleave(3, 0)  # (B * 3, Tq, D): three beams per sentence
    shared = mha(beams, cache=static, static_kv=True)
    torch.testing.assert_close(shared.context, full.context.repeat_interleave(3, 0))


@pytest.mark.parametrize("kv_heads", [1, 2])
@pytest.mark.parametrize("options", [{"score": "additive"}, {"normaliser": "sparsemax"}])
def test_learned_scores_and_other_normalisers_equal_the_expanded_model(kv_heads, options):
    mha = gqa(kv_heads, **options)
    x = torch.randn(2, 6, D, dtype=torch.float64)
    out = mha(x, mask=causal_mask(6), need_weights=True)
    full = expanded(mha, **options)(x, mask=causal_mask(6), need_weights=True)
    torch.testing.assert_close(out.context, full.context)
    torch.testing.assert_close(out.weights, full.weights)
