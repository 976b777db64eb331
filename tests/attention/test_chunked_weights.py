"""Chunked (memory-bounded) attention weights equal the unchunked ones, masks included."""

import pytest
import torch

from attnkit.attention import MultiHeadAttention, attend, causal_mask, key_padding_mask
from attnkit.attention.functional import attend_chunked, iter_attend

B, H, T, S, D = 2, 3, 11, 13, 8


def _inputs(tq=T, tk=S, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, tq, D, generator=g)
    k = torch.randn(B, H, tk, D, generator=g)
    v = torch.randn(B, H, tk, D, generator=g)
    return q, k, v


def _padding(tk=S):
    keep = torch.ones(B, tk, dtype=torch.bool)
    keep[1, tk - 4 :] = False
    return key_padding_mask(keep)  # (B, 1, 1, Tk)


@pytest.mark.parametrize("chunk", [1, 4, 11, 50])
@pytest.mark.parametrize("masking", ["none", "padding", "causal", "full_rows"])
def test_attend_chunked_equals_unchunked(chunk, masking):
    q, k, v = _inputs(T, T if masking == "causal" else S)
    tk = k.size(-2)
    mask = {
        "none": None,
        "padding": _padding(tk),
        "causal": causal_mask(T, tk) & _padding(tk),
        # a (B, 1, Tq, Tk) mask with a fully masked query row (zero weights, zero context)
        "full_rows": torch.rand(B, 1, T, tk, generator=torch.Generator().manual_seed(1)) > 0.3,
    }[masking]
    if masking == "full_rows":
        mask[0, 0, 2] = False
    ref = attend(q, k, v, mask, need_weights=True)
    out = attend_chunked(q, k, v, mask, chunk=chunk)
    torch.testing.assert_close(out.weights, ref.weights, rtol=0, atol=1e-6)
    torch.testing.assert_close(out.context, ref.context, rtol=0, atol=1e-6)
    assert out.path == ref.path and out.reason.startswith(f"chunked by {chunk} queries; ")


def test_iter_attend_blocks_are_bounded_and_cover_every_row():
    q, k, v = _inputs()
    ref = attend(q, k, v, _padding(), need_weights=True).weights
    starts = []
    for start, out in iter_attend(q, k, v, _padding(), chunk=4, need_weights=True):
        assert out.weights.shape == (B, H, min(4, T - start), S)  # one block, never (.., T, S)
        torch.testing.assert_close(out.weights, ref[..., start : start + 4, :], rtol=0, atol=1e-6)
        starts.append(start)
    assert starts == [0, 4, 8]


def test_chunked_writes_into_a_preallocated_output_and_handles_3d_inputs():
    q, k, v = (x[:, 0] for x in _inputs())  # (B, T, D): no head axis
    buffer = torch.full((B, T, S), float("nan"))
    out = attend_chunked(q, k, v, chunk=5, weights_out=buffer, score="dot")
    assert out.weights is buffer
    torch.testing.assert_close(buffer, attend(q, k, v, score="dot").weights, rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="chunk must be"):
        attend_chunked(q, k, v, chunk=0)


def test_multihead_weights_chunk_matches_unchunked_and_torch():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(B, T, 16)
    keep = torch.ones(B, T, dtype=torch.bool)
    keep[0, -3:] = False
    mask = causal_mask(T) & key_padding_mask(keep)
    ref = mha(x, mask=mask, need_weights=True)
    out = mha(x, mask=mask, need_weights=True, weights_chunk=3)
    torch.testing.assert_close(out.weights, ref.weights, rtol=0, atol=1e-6)
    torch.testing.assert_close(out.context, ref.context, rtol=0, atol=1e-6)
    # and against PyTorch's own layer with the same parameters (opposite mask convention)
    torch_mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(
            torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight])
        )
        torch_mha.in_proj_bias.copy_(torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
        torch_mha.out_proj.load_state_dict(mha.out_proj.state_dict())
        ctx, w = torch_mha(
            x, x, x, attn_mask=~causal_mask(T), key_padding_mask=~keep, average_attn_weights=False
        )
    torch.testing.assert_close(out.weights, w, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.context, ctx, rtol=1e-5, atol=1e-5)
