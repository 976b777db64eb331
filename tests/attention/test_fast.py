"""The fast dispatch (attention/fast.py) against the readable path of attend() and against SDPA.

``readable(...)`` runs :func:`attend` with the fast dispatch switched off, so the textbook
steps in functional.py run for every score and normaliser; ``attend(...)`` takes the fast
routes (fused SDPA, scores folded into one ``baddbmm``, in-place masking) where they apply.
"""

import pytest
import torch
import torch.nn.functional as F

from attnkit.attention import (
    attend,
    causal_mask,
    fast,
    key_padding_mask,
    padding_mask,
    scaled_dot_score,
)

B, H, TQ, TK, D, DV = 2, 3, 5, 7, 8, 4
DT = torch.float64
TOL = dict(atol=1e-10, rtol=1e-8)
MASKS = ["none", "padding", "causal", "full_rows", "padded_out", "per_head", "query_rows"]


def readable(*args, **kwargs):
    """:func:`attend` with the fast dispatch switched off: the readable steps only."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast, "applies", lambda score, return_scores: False)
        return attend(*args, **kwargs)


def inputs(seed=0, kv_heads=H, tq=TQ, tk=TK):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, tq, D, generator=g, dtype=DT, requires_grad=True)
    k = torch.randn(B, kv_heads, tk, D, generator=g, dtype=DT, requires_grad=True)
    v = torch.randn(B, kv_heads, tk, DV, generator=g, dtype=DT, requires_grad=True)
    return q, k, v


def make_mask(kind, tq=TQ, tk=TK):
    g = torch.Generator().manual_seed(7)
    if kind == "none":
        return None
    if kind == "padding":  # (B, 1, 1, Tk): the baddbmm bias per batch item
        return key_padding_mask(padding_mask(torch.tensor([tk, max(tk - 3, 1)]), tk))
    if kind == "causal":  # (Tq, Tk): the baddbmm bias shared by the batch
        return causal_mask(tq, tk)
    if kind == "full_rows":  # (B, 1, Tq, Tk) with an empty query row: masked in place
        mask = torch.rand(B, 1, tq, tk, generator=g) > 0.4
        mask[:, :, 1] = False
        mask[:, :, 0, 0] = True
        return mask
    if kind == "padded_out":  # every key of batch item 1 padded: all its rows are empty
        return key_padding_mask(padding_mask(torch.tensor([tk, 0]), tk))
    if kind == "per_head":  # (B, H, Tq, Tk): one mask per head
        mask = torch.rand(B, H, tq, tk, generator=g) > 0.3
        mask[..., 0] = True
        return mask
    return torch.rand(1, 1, tq, 1, generator=g) > 0.5  # (1, 1, Tq, 1): whole rows on/off


def options(normaliser):
    """Fresh normaliser options: the random normalisers get the same seeded generator."""
    if normaliser in ("gumbel", "sample"):
        return {"generator": torch.Generator().manual_seed(3)}
    return None


def loss(out):
    total = (out.context * torch.linspace(-1, 2, out.context.size(-1), dtype=DT)).sum()
    return total if out.log_prob is None else total + out.log_prob.sum()


def assert_same(fast_out, slow_out, tensors):
    torch.testing.assert_close(fast_out.context, slow_out.context, **TOL)
    if slow_out.weights is not None:
        torch.testing.assert_close(fast_out.weights, slow_out.weights, **TOL)
    if slow_out.log_prob is not None:
        torch.testing.assert_close(fast_out.log_prob, slow_out.log_prob, **TOL)
    fast_grads = torch.autograd.grad(loss(fast_out), tensors, allow_unused=True)
    slow_grads = torch.autograd.grad(loss(slow_out), tensors, allow_unused=True)
    for a, b in zip(fast_grads, slow_grads, strict=True):
        if b is None:
            assert a is None or torch.all(a == 0)
        else:
            torch.testing.assert_close(a, b, **TOL)
    assert fast_out.path == slow_out.path or fast_out.path.startswith("fused")


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("score", ["dot", "scaled_dot"])
@pytest.mark.parametrize(
    "normaliser", ["softmax", "sparsemax", "entmax15", "hard", "gumbel", "sample"]
)
def test_fast_equals_readable_with_weights(mask_kind, score, normaliser):
    q, k, v = inputs()
    mask = make_mask(mask_kind)
    kw = dict(score=score, normaliser=normaliser)
    ours = attend(q, k, v, mask, normaliser_options=options(normaliser), **kw)
    ref = readable(q, k, v, mask, normaliser_options=options(normaliser), **kw)
    assert_same(ours, ref, (q, k, v))
    if mask is not None:  # the empty-row rule, on both paths: zero weights, zero context
        empty = ~mask.any(-1).expand(B, H, TQ)
        assert torch.all(ours.context[empty] == 0) and torch.all(ours.weights[empty] == 0)


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("score", ["dot", "scaled_dot"])
def test_fused_equals_readable_without_weights(mask_kind, score):
    q, k, v = inputs(1)
    mask = make_mask(mask_kind)
    ours = attend(q, k, v, mask, score=score, need_weights=False)
    ref = readable(q, k, v, mask, score=score, need_weights=False)
    assert ours.path == "fused: scaled_dot_product_attention" and ours.weights is None
    assert ref.path.startswith("readable")
    assert_same(ours, ref, (q, k, v))


@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "full_rows"])
def test_fast_equals_readable_scale_reweight_heads_and_3d(mask_kind):
    q, k, v = inputs(2, kv_heads=1)  # keys shared by the heads: no baddbmm, in-place instead
    mask = make_mask(mask_kind)
    reweight = torch.rand(B, 1, TQ, TK, dtype=DT)
    for kw in (dict(scale=0.3), dict(reweight=reweight), dict(need_weights=False, scale=2.0)):
        assert_same(attend(q, k, v, mask, **kw), readable(q, k, v, mask, **kw), (q, k, v))
    q3, k3, v3 = (t[:, 0].detach().requires_grad_() for t in (q, k, v))  # (B, T, D)
    mask3 = None if mask is None else mask[:, 0] if mask.dim() == 4 else mask
    assert_same(attend(q3, k3, v3, mask3), readable(q3, k3, v3, mask3), (q3, k3, v3))


def test_fast_equals_readable_with_dropout():
    q, k, v = inputs(3)
    mask = make_mask("padding")
    torch.manual_seed(5)
    ours = attend(q, k, v, mask, dropout=0.5)
    torch.manual_seed(5)
    ref = readable(q, k, v, mask, dropout=0.5)
    assert_same(ours, ref, (q, k, v))


@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "per_head"])
@pytest.mark.parametrize("tq, tk", [(5, 7), (7, 7), (1, 9), (16, 3)])
def test_both_paths_match_torch_sdpa(mask_kind, tq, tk):
    q, k, v = inputs(4, tq=tq, tk=tk)
    if mask_kind == "causal" and tk < tq:
        mask = torch.ones(tq, tk, dtype=torch.bool).tril()  # every row keeps key 0
    else:
        mask = make_mask(mask_kind, tq, tk)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H, Tq, Dv)
    ref_grads = torch.autograd.grad((ref * 1.3).sum(), (q, k, v))
    for run in (attend, readable):
        for need_weights in (True, False):
            out = run(q, k, v, mask, need_weights=need_weights)
            torch.testing.assert_close(out.context, ref, **TOL)
            grads = torch.autograd.grad((out.context * 1.3).sum(), (q, k, v))
            for a, b in zip(grads, ref_grads, strict=True):
                torch.testing.assert_close(a, b, **TOL)


def test_readable_weights_match_sdpa_reference_formula():
    """SDPA's documented reference: ``softmax(q k^T * scale + bias)``, bias -inf where masked."""
    q, k, v = inputs(5)
    mask = make_mask("causal")
    bias = torch.zeros(TQ, TK, dtype=DT).masked_fill(~mask, float("-inf"))
    expected = torch.softmax(q @ k.transpose(-2, -1) / D**0.5 + bias, dim=-1)
    torch.testing.assert_close(readable(q, k, v, mask).weights, expected, **TOL)
    torch.testing.assert_close(attend(q, k, v, mask).weights, expected, **TOL)


def test_fast_paths_are_taken_where_they_were(monkeypatch):
    """Dot-product scores by name go through fast.attend_fast (fused without weights); a
    callable score, or asking for the raw scores, takes the readable path and says why."""
    calls = []
    real = fast.attend_fast
    monkeypatch.setattr(fast, "attend_fast", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    q, k, v = inputs(6)
    mask = make_mask("padding")
    assert attend(q, k, v, mask, score="dot").path == "readable: weights were requested"
    assert attend(q, k, v, mask, need_weights=False).path.startswith("fused")
    reason = "readable: normaliser 'sparsemax' is not softmax"
    assert attend(q, k, v, mask, normaliser="sparsemax", need_weights=False).path == reason
    assert len(calls) == 3
    out = attend(q, k, v, mask, score=scaled_dot_score, need_weights=False)
    assert out.path == "readable: score 'scaled_dot_score' is not dot-product"
    out = attend(q, k, v, mask, return_scores=True, need_weights=False)
    assert out.path == "readable: scores were requested" and out.scores is not None
    assert len(calls) == 3  # neither of the last two went through the fast dispatch


def test_fast_routes_directly():
    """fast.applies and fast.why_not_fused name every case."""
    assert fast.applies("dot", False) and fast.applies("scaled_dot", False)
    assert not fast.applies("scaled_dot", True) and not fast.applies(scaled_dot_score, False)
    assert fast.why_not_fused("scaled_dot", "softmax", False, False, None) is None
    assert "reweighting" in fast.why_not_fused("dot", "softmax", False, False, torch.ones(1))
