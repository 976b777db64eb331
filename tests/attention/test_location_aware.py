"""Location-aware attention (Chorowski et al. 2015, eqs. (5)-(9)) against its NumPy reference,
and its invariants: masked frames get 0, the weights sum to 1, U = 0 is content-only attention,
padding a batch changes nothing."""

import numpy as np
import pytest
import torch

from attnkit.attention import AdditiveAttention, LocationAwareAttention
from attnkit.attention.reference_numpy_location import location_aware_attention

B, S, DQ, DK, DH = 3, 7, 5, 4, 6


@pytest.fixture(autouse=True)
def _fp64():
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(torch.float32)


def _layer(width: int, filters: int = 3, seed: int = 0, **options) -> LocationAwareAttention:
    torch.manual_seed(seed)
    layer = LocationAwareAttention(DQ, DK, DH, filters=filters, width=width, **options)
    with torch.no_grad():  # large location weights, so that the location term matters
        layer.conv.weight.normal_(0.0, 2.0)
        layer.U.weight.normal_(0.0, 1.0)
    return layer


def _params(layer) -> dict:
    return {name: p.detach().numpy() for name, p in layer.state_dict().items()}


MASKS = {
    "none": None,
    "padding": torch.tensor([[True] * 7, [True] * 5 + [False] * 2, [True] * 2 + [False] * 5]),
    "holes": torch.tensor([[True, False] * 3 + [True], [False] * 6 + [True], [True] * 7]),
    "one row empty": torch.tensor([[True] * 7, [False] * 7, [True] * 4 + [False] * 3]),
}


def _previous(mask, seed: int) -> torch.Tensor:
    """Random weights over the unmasked frames (B, S), summing to 1 per row (0 if none)."""
    g = torch.Generator().manual_seed(seed)
    raw = torch.rand(B, S, generator=g)
    if mask is not None:
        raw = raw * mask
    return raw / raw.sum(-1, keepdim=True).clamp_min(1e-300)


@pytest.mark.parametrize("width", [1, 3, 5, 9, 15])  # 9, 15: wider than the utterance
@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize("normaliser,beta", [("softmax", 1.0), ("softmax", 2.0), ("smooth", 1.5)])
def test_one_step_matches_numpy_reference_eqs_5_to_9(width, mask_name, normaliser, beta):
    layer = _layer(width, sharpening=beta, normaliser=normaliser)
    mask = MASKS[mask_name]
    s, h, v = torch.randn(B, DQ), torch.randn(B, S, DK), torch.randn(B, S, 3)
    previous = _previous(mask, seed=width)
    out = layer(s, h, v, mask, previous=previous)
    ref_mask = None if mask is None else mask.numpy()
    ref = location_aware_attention(
        s.numpy(),
        h.numpy(),
        previous.numpy(),
        _params(layer),
        ref_mask,
        v.numpy(),
        beta,
        normaliser,
    )
    np.testing.assert_allclose(out.weights.detach().numpy(), ref.weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out.context.detach().numpy(), ref.context, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("width", [3, 7])
def test_steps_fed_back_match_the_reference(width):
    """Three decoder steps, each step's weights becoming the next step's ``alpha_{i-1}``."""
    layer = _layer(width)
    mask = MASKS["padding"]
    h = torch.randn(B, S, DK)
    previous = LocationAwareAttention.initial_weights(mask)
    ref_previous = previous.numpy()
    prepared = layer.prepare_key(h)
    for _ in range(3):
        s = torch.randn(B, DQ)
        out = layer(s, h, mask=mask, previous=previous, prepared_key=prepared)
        ref = location_aware_attention(s.numpy(), h.numpy(), ref_previous, _params(layer), mask)
        np.testing.assert_allclose(out.weights.detach().numpy(), ref.weights, rtol=1e-10)
        previous, ref_previous = out.weights, ref.weights


@pytest.mark.parametrize("normaliser", ["softmax", "smooth"])
def test_masked_frames_get_exactly_zero_and_rows_sum_to_one(normaliser):
    torch.set_default_dtype(torch.float32)
    layer = _layer(5, normaliser=normaliser)
    mask = MASKS["one row empty"]
    previous = _previous(mask, seed=1).float()
    out = layer(torch.randn(B, DQ), torch.randn(B, S, DK), mask=mask, previous=previous)
    assert torch.equal(out.weights[~mask], torch.zeros(int((~mask).sum())))
    sums = out.weights.sum(-1)
    torch.testing.assert_close(sums[[0, 2]], torch.ones(2))
    assert sums[1] == 0 and torch.equal(out.context[1], torch.zeros(DK))  # empty row: 0, no NaN
    assert out.weights.dtype == torch.float32 and torch.isfinite(out.context).all()


def test_without_location_term_it_is_content_only_additive_attention():
    """``U = 0`` (or ``alpha_{i-1} = 0``) leaves eq. (5): Bahdanau's additive attention with the
    same ``W``, ``b``, ``V``, ``w``."""
    layer = _layer(5)
    additive = AdditiveAttention(DQ, DK, DH)
    additive.score.load_state_dict(layer.score.state_dict())
    mask = MASKS["padding"]
    s, h = torch.randn(B, DQ), torch.randn(B, S, DK)
    expected = additive(s[:, None], h, mask=mask[:, None, :])
    zero_start = LocationAwareAttention.initial_weights(mask, "zeros")
    out = layer(s, h, mask=mask, previous=zero_start)
    torch.testing.assert_close(out.weights, expected.weights[:, 0], rtol=1e-12, atol=1e-14)
    previous = _previous(mask, seed=3)
    assert not torch.allclose(layer(s, h, mask=mask, previous=previous).weights, out.weights)
    with torch.no_grad():
        layer.U.weight.zero_()
    out = layer(s, h, mask=mask, previous=previous)
    torch.testing.assert_close(out.weights, expected.weights[:, 0], rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(out.context, expected.context[:, 0], rtol=1e-12, atol=1e-14)


def test_padding_a_batch_changes_nothing():
    """An utterance gets the same weights alone as padded in a batch: the padded frames'
    previous weights are 0, as the convolution's zero padding beyond the end."""
    layer = _layer(5)
    mask = MASKS["padding"]
    s, h = torch.randn(B, DQ), torch.randn(B, S, DK)
    previous = _previous(mask, seed=4)
    batched = layer(s, h, mask=mask, previous=previous)
    for b in range(B):
        n = int(mask[b].sum())
        alone = layer(s[b : b + 1], h[b : b + 1, :n], previous=previous[b : b + 1, :n])
        torch.testing.assert_close(batched.weights[b, :n], alone.weights[0], rtol=1e-12, atol=0)
        torch.testing.assert_close(batched.context[b], alone.context[0], rtol=1e-12, atol=1e-14)


def test_step_shapes_prepared_key_and_gradients():
    layer = _layer(3)
    mask = MASKS["padding"]
    s, h = torch.randn(B, DQ), torch.randn(B, S, DK)
    previous = LocationAwareAttention.initial_weights(mask)
    flat = layer(s, h, mask=mask, previous=previous)
    assert flat.context.shape == (B, DK) and flat.weights.shape == (B, S)
    step = layer(s[:, None], h, mask=mask[:, None], previous=previous[:, None])  # (B, 1, ..)
    assert step.context.shape == (B, 1, DK) and step.weights.shape == (B, 1, S)
    torch.testing.assert_close(step.weights[:, 0], flat.weights)
    prepared = layer(s, h, mask=mask, previous=previous, prepared_key=layer.prepare_key(h))
    torch.testing.assert_close(prepared.weights, flat.weights)
    flat.context.sum().backward()
    assert layer.conv.weight.grad.abs().sum() > 0 and layer.U.weight.grad.abs().sum() > 0


def test_initial_weights():
    mask = MASKS["one row empty"]
    uniform = LocationAwareAttention.initial_weights(mask)
    torch.testing.assert_close(uniform[2], torch.tensor([0.25] * 4 + [0.0] * 3))
    assert torch.equal(uniform[1], torch.zeros(S)) and uniform.dtype == torch.float64
    assert torch.equal(LocationAwareAttention.initial_weights(mask, "zeros"), torch.zeros(B, S))
    with pytest.raises(ValueError, match="start"):
        LocationAwareAttention.initial_weights(mask, "first")


@pytest.mark.parametrize(
    "options,message",
    [
        ({"width": 4}, "odd"),
        ({"width": 0}, "odd"),
        ({"filters": 0}, "filters"),
        ({"sharpening": 0.0}, "sharpening"),
        ({"normaliser": "sparsemax"}, "smooth"),
    ],
)
def test_bad_options_say_what_to_change(options, message):
    with pytest.raises(ValueError, match=message):
        LocationAwareAttention(DQ, **options)
