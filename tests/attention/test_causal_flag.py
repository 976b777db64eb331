"""``attend(..., causal=True)`` and ``MultiHeadAttention(..., causal=True)``: the same numbers
as the built causal mask on every path (the fused kernel's ``is_causal`` where it runs alone,
the mask built elsewhere: weights asked for, another mask, a bias, queries fewer than keys)."""

import pytest
import torch

from attnkit.attention import MultiHeadAttention, attend
from attnkit.attention.masks import causal_mask, combine, key_padding_mask

g = torch.Generator().manual_seed(0)


def _qkv(tq=7, tk=7, heads=4, kv_heads=4):
    q = torch.randn(2, heads, tq, 8, generator=g)
    k = torch.randn(2, kv_heads, tk, 8, generator=g)
    v = torch.randn(2, kv_heads, tk, 8, generator=g)
    return q, k, v


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("lengths", [(7, 7), (3, 7), (1, 7)])
@pytest.mark.parametrize("kv_heads", [4, 2])
def test_causal_equals_the_built_mask(need_weights, lengths, kv_heads):
    q, k, v = _qkv(*lengths, kv_heads=kv_heads)
    built = attend(q, k, v, causal_mask(*lengths), need_weights=need_weights)
    flagged = attend(q, k, v, causal=True, need_weights=need_weights)
    torch.testing.assert_close(flagged.context, built.context)
    if need_weights:
        torch.testing.assert_close(flagged.weights, built.weights)


def test_alone_on_equal_lengths_it_runs_fused_as_is_causal():
    q, k, v = _qkv()
    out = attend(q, k, v, causal=True, need_weights=False)
    assert out.path == "fused" and out.reason == ""
    assert attend(q, k, v, causal=True, need_weights=True).path != "fused"


def test_causal_is_combined_with_a_padding_mask_and_a_bias():
    q, k, v = _qkv()
    keep = torch.ones(2, 7, dtype=torch.bool)
    keep[1, 5:] = False
    pad = key_padding_mask(keep)  # (B, 1, 1, Tk)
    bias = torch.randn(1, 4, 7, 7, generator=g)
    for mask, b in ((pad, None), (None, bias), (pad, bias)):
        built = attend(q, k, v, combine(mask, causal_mask(7)), bias=b, need_weights=False)
        flagged = attend(q, k, v, mask, bias=b, causal=True, need_weights=False)
        torch.testing.assert_close(flagged.context, built.context)


def test_multi_head_attention_causal_with_a_cache_and_chunks():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, kv_heads=2, positions="rope").eval()
    x = torch.randn(2, 9, 16)
    built = mha(x, mask=causal_mask(9), need_weights=True)
    flagged = mha(x, causal=True, need_weights=True)
    torch.testing.assert_close(flagged.context, built.context)
    torch.testing.assert_close(flagged.weights, built.weights)
    chunked = mha(x, causal=True, need_weights=True, weights_chunk=4)
    torch.testing.assert_close(chunked.weights, built.weights)
    head = mha(x[:, :5], causal=True, use_cache=True)  # then four steps at once, cached
    tail = mha(x[:, 5:], causal=True, cache=head.cache)
    torch.testing.assert_close(tail.context, built.context[:, 5:])
