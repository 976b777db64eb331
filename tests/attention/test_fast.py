"""The fast dispatch (attention/fast.py) against the readable path of attend() and against SDPA.

``readable(...)`` runs :func:`attend` with ``path="readable"``, so the steps of steps.py run as
written for every score and normaliser; ``attend(...)`` takes the fast routes (fused SDPA,
scores folded into one ``baddbmm``, in-place masking) where they apply. Every call here goes
through :func:`traced`, which checks that ``out.path`` names the kernels that really ran.
"""

import pytest
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from attnkit.attention import attend as attend_any_path
from attnkit.attention import (
    causal_mask,
    fast,
    key_padding_mask,
    padding_mask,
    reference_numpy,
    scaled_dot_score,
)
from attnkit.attention.steps import AttendSettings

B, H, TQ, TK, D, DV = 2, 3, 5, 7, 8, 4
DT = torch.float64
TOL = dict(atol=1e-10, rtol=1e-8)
MASKS = ["none", "padding", "causal", "full_rows", "padded_out", "per_head", "query_rows"]


# what only a substituted step calls: the fused kernel, the folded product, in-place masking
SUBSTITUTES = {"scaled_dot_product_attention", "baddbmm", "bmm", "mul_", "masked_fill_"}


class Calls(TorchFunctionMode):
    """The names of the torch functions and tensor methods called inside the block."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def traced(*args, **kwargs):
    """:func:`attend`, checking that ``out.path`` is true: the fused kernel and nothing else of
    the steps, a folded (substituted) score and mask, or none of the substitutes at all."""
    with Calls() as calls:
        out = attend_any_path(*args, **kwargs)
    ran = calls.names & SUBSTITUTES
    if out.path == "fused":
        assert ran == {"scaled_dot_product_attention"} and "softmax" not in calls.names
        assert out.reason == ""
    elif out.path == "folded":
        assert ran and "scaled_dot_product_attention" not in ran, ran
    else:
        assert out.path == "readable" and not ran, (out.path, ran)
    if out.path != "fused":
        assert out.reason, "a path other than the fused one says why"
    return out


def attend(*args, **kwargs):
    return traced(*args, **kwargs)


def readable(*args, **kwargs):
    """:func:`attend` with ``path="readable"``: the four steps as written."""
    out = traced(*args, path="readable", **kwargs)
    assert out.path == "readable" and out.reason == "path='readable' was asked for"
    return out


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
    assert slow_out.path == "readable" and fast_out.path in ("fused", "folded")


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
    assert ours.path == "fused" and ours.weights is None
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


@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "per_head", "full_rows"])
@pytest.mark.parametrize("score", ["dot", "scaled_dot"])
def test_three_paths_agree_with_each_other_sdpa_and_numpy(mask_kind, score):
    """fused, folded and readable give one context (and folded and readable one set of
    weights), equal to torch's SDPA and to the NumPy reference of the four steps."""
    q, k, v = (t.detach() for t in inputs(8))
    mask = make_mask(mask_kind)
    outs = {
        "fused": attend(q, k, v, mask, score=score, need_weights=False),
        "folded": attend(q, k, v, mask, score=score),
        "readable": readable(q, k, v, mask, score=score),
    }
    assert {name: out.path for name, out in outs.items()} == {p: p for p in outs}
    numpy_mask = None if mask is None else mask.expand(B, H, TQ, TK).numpy()
    steps = reference_numpy.attention(q.numpy(), k.numpy(), v.numpy(), numpy_mask, score=score)
    for out in outs.values():
        torch.testing.assert_close(out.context, torch.from_numpy(steps.context), **TOL)
    for name in ("folded", "readable"):
        torch.testing.assert_close(outs[name].weights, torch.from_numpy(steps.weights), **TOL)
    if mask_kind != "full_rows":  # SDPA gives NaN for a query with no key
        scale = 1.0 if score == "dot" else None
        sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
        for out in outs.values():
            torch.testing.assert_close(out.context, sdpa, **TOL)


def test_readable_weights_match_sdpa_reference_formula():
    """SDPA's documented reference: ``softmax(q k^T * scale + bias)``, bias -inf where masked."""
    q, k, v = inputs(5)
    mask = make_mask("causal")
    bias = torch.zeros(TQ, TK, dtype=DT).masked_fill(~mask, float("-inf"))
    expected = torch.softmax(q @ k.transpose(-2, -1) / D**0.5 + bias, dim=-1)
    torch.testing.assert_close(readable(q, k, v, mask).weights, expected, **TOL)
    torch.testing.assert_close(attend(q, k, v, mask).weights, expected, **TOL)


def test_each_kind_of_call_takes_its_path_and_says_why():
    """fused without weights; folded for dot-product scores by name otherwise; readable for a
    learned score, for the raw scores, or when asked (``traced`` checks the kernels)."""
    q, k, v = inputs(6)
    mask = make_mask("padding")
    reweight = torch.rand(B, 1, TQ, TK, dtype=DT)
    cases = [
        (dict(need_weights=False), "fused", ""),
        (dict(need_weights=False, score="dot"), "fused", ""),
        (dict(score="dot"), "folded", "weights were requested"),
        (dict(), "folded", "weights were requested"),
        (dict(need_weights=False, normaliser="sparsemax"), "folded", "normaliser 'sparsemax'"),
        (dict(need_weights=False, reweight=reweight), "folded", "a reweighting"),
        (dict(need_weights=False, score=scaled_dot_score), "readable", "score 'scaled_dot_score'"),
        (dict(return_scores=True), "readable", "scores were requested"),
        (dict(need_weights=False, path="readable"), "readable", "path='readable'"),
    ]
    for kw, path, reason in cases:
        out = attend(q, k, v, mask, **kw)
        assert (out.path, out.reason[: len(reason)]) == (path, reason), kw
    with pytest.raises(ValueError, match="path must be one of"):
        attend(q, k, v, path="fast")


def test_dot_with_nothing_to_fold_is_called_readable():
    """Keys shared by the heads, ``dot``, no mask: the fast dispatch has nothing to substitute,
    runs the readable steps, and says so."""
    q, k, v = inputs(7, kv_heads=1)
    out = attend(q, k, v, score="dot")
    assert out.path == "readable" and out.reason == "weights were requested"
    ref = readable(q, k, v, score="dot")
    torch.testing.assert_close(out.context, ref.context, **TOL)
    torch.testing.assert_close(out.weights, ref.weights, **TOL)


def test_fast_routes_directly():
    """fast.applies and fast.why_not_fused name every case from the settings."""
    assert fast.applies(AttendSettings(score="dot")) and fast.applies(AttendSettings())
    assert not fast.applies(AttendSettings(return_scores=True))
    assert not fast.applies(AttendSettings(score=scaled_dot_score))
    assert not fast.applies(AttendSettings(path="readable"))
    assert fast.why_not_fused(AttendSettings(need_weights=False), None) is None
    settings = AttendSettings(score="dot", need_weights=False)
    assert "reweighting" in fast.why_not_fused(settings, torch.ones(1))
    with pytest.raises(ValueError, match="scale applies only"):
        AttendSettings(score="dot", scale=0.5)
