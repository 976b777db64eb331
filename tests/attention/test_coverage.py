"""Coverage attention (See et al. 2017, eqs. (2), (3), (10)-(12)) against its NumPy reference,
and its invariants: masked positions get 0, the weights sum to 1, no coverage (or a zero
coverage vector) is Bahdanau's additive attention, the coverage is the running sum of the past
weights, and the coverage loss is ``sum_i min(a_i, c_i)``."""

import numpy as np
import pytest
import torch

from attnkit.attention import AdditiveAttention, CoverageAttention, coverage_loss
from attnkit.attention.reference_numpy_coverage import (
    coverage_attention_numpy,
    coverage_loss_numpy,
)

B, S, DQ, DK, DH = 3, 7, 5, 4, 6


@pytest.fixture(autouse=True)
def _fp64():
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(torch.float32)


def _layer(coverage: bool = True, seed: int = 0) -> CoverageAttention:
    torch.manual_seed(seed)
    layer = CoverageAttention(DQ, DK, DH, coverage=coverage)
    if coverage:
        with torch.no_grad():  # a large w_c, so that the coverage term matters
            layer.w_c.weight.normal_(0.0, 2.0)
    return layer


def _params(layer) -> dict:
    return {name: p.detach().numpy() for name, p in layer.state_dict().items()}


MASKS = {
    "none": None,
    "padding": torch.tensor([[True] * 7, [True] * 5 + [False] * 2, [True] * 2 + [False] * 5]),
    "holes": torch.tensor([[True, False] * 3 + [True], [False] * 6 + [True], [True] * 7]),
    "one row empty": torch.tensor([[True] * 7, [False] * 7, [True] * 4 + [False] * 3]),
}


def _coverage(mask, seed: int, steps: float = 2.5) -> torch.Tensor:
    """A plausible ``c^t`` (B, S): ``steps`` steps' worth of mass on the unmasked positions."""
    g = torch.Generator().manual_seed(seed)
    raw = torch.rand(B, S, generator=g)
    if mask is not None:
        raw = raw * mask
    return steps * raw / raw.sum(-1, keepdim=True).clamp_min(1e-300)


@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize("with_coverage", [True, False])
def test_one_step_matches_numpy_reference_eqs_2_3_11(mask_name, with_coverage):
    layer = _layer(with_coverage)
    mask = MASKS[mask_name]
    s, h, v = torch.randn(B, DQ), torch.randn(B, S, DK), torch.randn(B, S, 3)
    coverage = _coverage(mask, seed=1)
    out = layer(s, h, v, mask, coverage=coverage)
    ref_mask = None if mask is None else mask.numpy()
    ref = coverage_attention_numpy(
        s.numpy(), h.numpy(), coverage.numpy(), _params(layer), ref_mask, v.numpy()
    )
    np.testing.assert_allclose(out.weights.detach().numpy(), ref.weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out.context.detach().numpy(), ref.context, rtol=1e-10, atol=1e-12)


def test_masked_positions_get_exactly_zero_and_rows_sum_to_one():
    torch.set_default_dtype(torch.float32)
    layer = _layer()
    mask = MASKS["one row empty"]
    coverage = _coverage(mask, seed=2).float()
    out = layer(torch.randn(B, DQ), torch.randn(B, S, DK), mask=mask, coverage=coverage)
    assert torch.equal(out.weights[~mask], torch.zeros(int((~mask).sum())))
    sums = out.weights.sum(-1)
    torch.testing.assert_close(sums[[0, 2]], torch.ones(2))
    assert sums[1] == 0 and torch.equal(out.context[1], torch.zeros(DK))  # empty row: 0, no NaN
    assert out.weights.dtype == torch.float32 and torch.isfinite(out.context).all()


def test_without_coverage_or_with_zero_coverage_it_is_bahdanau_additive_attention():
    """Eq. (11) without ``w_c c_i`` is eq. (1): :class:`AdditiveAttention` with the same
    ``W_s``, ``b_attn``, ``W_h``, ``v``; so is the first step, ``c^0 = 0``."""
    layer = _layer()
    baseline = CoverageAttention(DQ, DK, DH, coverage=False)
    baseline.load_state_dict(layer.state_dict(), strict=False)  # all but w_c
    additive = AdditiveAttention(DQ, DK, DH)
    additive.score.load_state_dict(layer.score.state_dict())
    mask = MASKS["padding"]
    s, h = torch.randn(B, DQ), torch.randn(B, S, DK)
    expected = additive(s[:, None], h, mask=mask[:, None, :])
    for out in (
        baseline(s, h, mask=mask),
        baseline(s, h, mask=mask, coverage=_coverage(mask, seed=3)),  # accepted, ignored
        layer(s, h, mask=mask, coverage=CoverageAttention.initial_coverage(mask)),
    ):
        torch.testing.assert_close(out.weights, expected.weights[:, 0], rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(out.context, expected.context[:, 0], rtol=1e-12, atol=1e-14)
    covered = layer(s, h, mask=mask, coverage=_coverage(mask, seed=3))
    assert not torch.allclose(covered.weights, expected.weights[:, 0], atol=1e-3)
    assert "w_c.weight" not in baseline.state_dict() and not baseline.coverage


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_large_coverage_term_pushes_attention_as_its_sign_says(sign):
    """``w_c = sign * 1000 v``: a covered position's hidden layer saturates towards ``sign(v)``,
    so its score goes to ``+sum|v|`` (the most any position can get) or ``-sum|v|``."""
    layer = _layer()
    with torch.no_grad():
        layer.w_c.weight.copy_(sign * 1000.0 * layer.score.v.weight.T)  # (Dh, 1)
    s, h = torch.randn(B, DQ), torch.randn(B, S, DK)
    coverage = torch.zeros(B, S)
    coverage[:, 3] = 1.0  # position 3 fully covered
    before = layer(s, h, coverage=torch.zeros(B, S)).weights
    after = layer(s, h, coverage=coverage).weights
    if sign > 0:
        assert torch.all(after[:, 3] > before[:, 3]) and torch.all(after.argmax(-1) == 3)
    else:
        assert torch.all(after[:, 3] < before[:, 3]) and torch.all(after.argmin(-1) == 3)


def test_four_steps_coverage_is_the_running_sum_and_matches_the_reference():
    """Eq. (10) stepped with :meth:`accumulate`: ``c^t = sum_{t' < t} a^{t'}``; every step's
    weights and eq. (12)'s loss equal the reference fed the reference's own coverage."""
    layer = _layer()
    mask = MASKS["padding"]
    h = torch.randn(B, S, DK)
    prepared = layer.prepare_key(h)
    coverage = CoverageAttention.initial_coverage(mask)
    ref_coverage, past = coverage.numpy().copy(), []
    for _ in range(4):
        s = torch.randn(B, DQ)
        out = layer(s, h, mask=mask, coverage=coverage, prepared_key=prepared)
        ref = coverage_attention_numpy(s.numpy(), h.numpy(), ref_coverage, _params(layer), mask)
        np.testing.assert_allclose(out.weights.detach().numpy(), ref.weights, rtol=1e-10)
        loss = coverage_loss(out.weights, coverage, mask)
        ref_loss = coverage_loss_numpy(ref.weights, ref_coverage, mask.numpy())
        np.testing.assert_allclose(loss.detach().numpy(), ref_loss, rtol=1e-10, atol=1e-14)
        past.append(out.weights)
        coverage = CoverageAttention.accumulate(coverage, out.weights)
        ref_coverage = ref_coverage + ref.weights
        torch.testing.assert_close(coverage, torch.stack(past).sum(0), rtol=1e-14, atol=0)
    assert torch.equal(coverage[~mask], torch.zeros(int((~mask).sum())))  # padding stays 0
    torch.testing.assert_close(coverage.sum(-1), torch.full((B,), 4.0))  # one per step


def test_coverage_loss_by_hand_and_masked_positions_count_nothing():
    weights = torch.tensor([[0.5, 0.3, 0.2, 0.0], [0.5, 0.3, 0.1, 0.1]])
    coverage = torch.tensor([[0.1, 0.6, 0.2, 0.9], [0.1, 0.6, 0.2, 0.9]])
    hand = torch.tensor([0.1 + 0.3 + 0.2 + 0.0, 0.1 + 0.3 + 0.1 + 0.1])  # sum_i min(a_i, c_i)
    torch.testing.assert_close(coverage_loss(weights, coverage), hand, rtol=1e-15, atol=0)
    mask = torch.tensor([[True, True, True, False]] * 2)
    masked = torch.tensor([0.1 + 0.3 + 0.2, 0.1 + 0.3 + 0.1])  # the stray 0.1 at 3 drops out
    torch.testing.assert_close(coverage_loss(weights, coverage, mask), masked, rtol=1e-15, atol=0)
    for m in (None, mask):
        ref = coverage_loss_numpy(weights.numpy(), coverage.numpy(), None if m is None else m)
        np.testing.assert_allclose(coverage_loss(weights, coverage, m).numpy(), ref, rtol=1e-15)
    assert coverage_loss(weights[:, None], coverage[:, None]).shape == (2, 1)  # (..., S) -> (...)


def test_coverage_is_required_when_built_with_it():
    layer = _layer()
    with pytest.raises(ValueError, match="initial_coverage"):
        layer(torch.randn(B, DQ), torch.randn(B, S, DK))


def test_initial_coverage_is_zero():
    mask = MASKS["padding"]
    zeros = CoverageAttention.initial_coverage(mask)
    assert torch.equal(zeros, torch.zeros(B, S)) and zeros.dtype == torch.float64
    assert CoverageAttention.initial_coverage(mask, torch.float32).dtype == torch.float32


def test_step_shapes_prepared_key_and_gradients():
    layer = _layer()
    mask = MASKS["padding"]
    s, h = torch.randn(B, DQ), torch.randn(B, S, DK)
    coverage = _coverage(mask, seed=5)
    flat = layer(s, h, mask=mask, coverage=coverage)
    assert flat.context.shape == (B, DK) and flat.weights.shape == (B, S)
    step = layer(s[:, None], h, mask=mask[:, None], coverage=coverage[:, None])  # (B, 1, ..)
    assert step.context.shape == (B, 1, DK) and step.weights.shape == (B, 1, S)
    torch.testing.assert_close(step.weights[:, 0], flat.weights)
    prepared = layer(s, h, mask=mask, coverage=coverage, prepared_key=layer.prepare_key(h))
    torch.testing.assert_close(prepared.weights, flat.weights)
    (flat.context.sum() + coverage_loss(flat.weights, coverage, mask).sum()).backward()
    assert layer.w_c.weight.grad.abs().sum() > 0 and layer.score.W_key.weight.grad.abs().sum() > 0
