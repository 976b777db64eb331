"""attend() against PyTorch's scaled_dot_product_attention, and its invariances."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attnkit.attention import attend, causal_mask, key_padding_mask, padding_mask

TOL = {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.float64: dict(atol=1e-10, rtol=1e-8)}


@st.composite
def attention_case(draw):
    b, h = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    tq, tk = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    d, dv = draw(st.integers(1, 16)), draw(st.integers(1, 16))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    mask_kind = draw(st.sampled_from(["none", "padding", "causal", "random"]))
    seed = draw(st.integers(0, 2**16))
    return b, h, tq, tk, d, dv, dtype, mask_kind, seed


def make(b, h, tq, tk, d, dv, dtype, mask_kind, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, tq, d, generator=g, dtype=dtype)
    k = torch.randn(b, h, tk, d, generator=g, dtype=dtype)
    v = torch.randn(b, h, tk, dv, generator=g, dtype=dtype)
    if mask_kind == "none":
        mask = None
    elif mask_kind == "padding":
        lengths = torch.randint(1, tk + 1, (b,), generator=g)
        mask = key_padding_mask(padding_mask(lengths, tk))  # (B, 1, 1, Tk)
    elif mask_kind == "causal":
        # with tk < tq the queries outnumber the keys; tril still leaves key 0 to every row
        mask = causal_mask(tq, tk) if tk >= tq else torch.ones(tq, tk, dtype=torch.bool).tril()
    else:
        mask = torch.rand(b, 1, tq, tk, generator=g) > 0.3
        mask[..., 0] = True  # every row keeps a key: SDPA gives NaN for empty rows
    return q, k, v, mask


@given(attention_case())
def test_attend_matches_sdpa_forward_and_backward(case):
    q, k, v, mask = make(*case)
    for t in (q, k, v):
        t.requires_grad_(True)
    ours = attend(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    tol = TOL[q.dtype]
    torch.testing.assert_close(ours.context, ref, **tol)
    grads = torch.autograd.grad((ours.context * 1.7).sum(), (q, k, v))
    ref_grads = torch.autograd.grad((ref * 1.7).sum(), (q, k, v))
    for a, r in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(a, r, **tol)
    # the weights are a distribution over the allowed keys
    torch.testing.assert_close(ours.weights.sum(-1), torch.ones_like(ours.weights.sum(-1)))
    if mask is not None:
        assert torch.all(ours.weights.masked_select(~mask.expand_as(ours.weights)) == 0)


@given(attention_case())
def test_fused_path_equals_readable_path(case):
    q, k, v, mask = make(*case)
    for score in ("dot", "scaled_dot"):
        fast = attend(q, k, v, mask, score=score, need_weights=False)
        slow = attend(q, k, v, mask, score=score, need_weights=True)
        assert fast.path == "fused" and fast.weights is None and fast.reason == ""
        assert slow.path == "folded" and slow.reason == "weights were requested"
        torch.testing.assert_close(fast.context, slow.context, **TOL[q.dtype])


def test_bf16_fused_close_to_fp32():
    q, k, v = (torch.randn(2, 2, 8, 16) for _ in range(3))
    ref = attend(q, k, v).context
    out = attend(q.bfloat16(), k.bfloat16(), v.bfloat16(), need_weights=False).context
    torch.testing.assert_close(out.float(), ref, atol=3e-2, rtol=3e-2)


def test_dot_score_is_unscaled_self_attention():
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    out = attend(x, x, x, score="dot")
    expected = torch.softmax(x @ x.transpose(1, 2), dim=-1)  # x_i^T x_j
    torch.testing.assert_close(out.weights, expected)
    torch.testing.assert_close(out.context, expected @ x)
    assert out.context.shape == (2, 5, 3) and out.weights.shape == (2, 5, 5)


@pytest.mark.parametrize("normaliser", ["softmax", "sparsemax", "entmax15", "hard", "gumbel"])
@pytest.mark.parametrize("fast", [True, False])
def test_fully_masked_rows_give_zeros_not_nan(normaliser, fast):
    q = torch.randn(2, 2, 4, 8, requires_grad=True)
    k = torch.randn(2, 2, 6, 8, requires_grad=True)
    v = torch.randn(2, 2, 6, 5, requires_grad=True)
    mask = torch.rand(2, 1, 4, 6) > 0.4
    mask[:, :, 1] = False  # query 1 may attend nowhere
    mask[:, :, 0, 0] = True
    out = attend(q, k, v, mask, normaliser=normaliser, need_weights=not fast)
    assert torch.isfinite(out.context).all()
    assert torch.all(out.context[:, :, 1] == 0)
    if out.weights is not None:
        assert torch.all(out.weights[:, :, 1] == 0)
    out.context.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()


@pytest.mark.parametrize("normaliser", ["softmax", "sparsemax", "entmax15", "hard"])
def test_padding_masked_keys_change_nothing(normaliser):
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 4)
    base = attend(q, k, v, normaliser=normaliser)
    pad_k = torch.cat([k, torch.randn(2, 3, 3, 8) * 100], dim=2)  # junk keys
    pad_v = torch.cat([v, torch.randn(2, 3, 3, 4) * 100], dim=2)
    keep = torch.tensor([[True] * 6 + [False] * 3] * 2)
    padded = attend(q, pad_k, pad_v, key_padding_mask(keep), normaliser=normaliser)
    torch.testing.assert_close(padded.context, base.context)
    torch.testing.assert_close(padded.weights[..., :6], base.weights)
    assert torch.all(padded.weights[..., 6:] == 0)


@pytest.mark.parametrize("score", ["dot", "scaled_dot"])
def test_self_attention_without_positions_is_permutation_equivariant(score):
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    perm = torch.randperm(7)
    out = attend(x, x, x, score=score)
    out_p = attend(x[:, perm], x[:, perm], x[:, perm], score=score)
    torch.testing.assert_close(out_p.context, out.context[:, perm])
    torch.testing.assert_close(out_p.weights, out.weights[:, perm][:, :, perm])


def test_three_d_inputs_match_single_head_four_d():
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    mask = torch.rand(2, 4, 6) > 0.3
    out3 = attend(q, k, v, mask)
    out4 = attend(q[:, None], k[:, None], v[:, None], mask[:, None])
    torch.testing.assert_close(out3.context, out4.context[:, 0])
    torch.testing.assert_close(out3.weights, out4.weights[:, 0])


def test_scale_override_and_return_scores():
    q, k, v = torch.randn(1, 1, 3, 4), torch.randn(1, 1, 5, 4), torch.randn(1, 1, 5, 2)
    out = attend(q, k, v, scale=0.25, return_scores=True)
    torch.testing.assert_close(out.scores, q @ k.transpose(-2, -1) * 0.25)
    torch.testing.assert_close(out.weights, torch.softmax(out.scores, -1))


def test_dropout_on_weights_matches_sdpa_statistics():
    torch.manual_seed(1)
    q, k, v = torch.randn(1, 1, 1, 4), torch.randn(1, 1, 50, 4), torch.ones(1, 1, 50, 1)
    out = [attend(q, k, v, dropout=0.5).context.item() for _ in range(400)]
    # E[dropout(w) @ 1] = sum(w) = 1: inverted dropout keeps the expectation
    assert abs(sum(out) / len(out) - 1.0) < 0.1
    assert max(out) > 1.2  # and it really drops


def test_clear_errors():
    q = torch.randn(2, 3, 4)
    with pytest.raises(TypeError, match="bool"):
        attend(q, q, q, torch.ones(2, 3, 3))
    with pytest.raises(ValueError, match="does not broadcast"):
        attend(q, q, q, torch.ones(5, 3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="learned parameters"):
        attend(q, q, q, score="general")
    with pytest.raises(ValueError, match="unknown normaliser"):
        attend(q, q, q, normaliser="softermax")
    with pytest.raises(ValueError, match="scale applies only"):
        attend(q, q, q, score="dot", scale=0.5)
    with pytest.raises(ValueError, match="must all be 4-d"):
        attend(q, q[:, None], q)
