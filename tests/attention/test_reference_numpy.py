"""The NumPy reference equals the torch path: every score, every deterministic normaliser, masks,
and multi-head attention with copied weights."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnkit.attention import (
    AdditiveScore,
    GeneralScore,
    LocationScore,
    MultiHeadAttention,
    attend,
)
from attnkit.attention import reference_numpy as ref
from attnkit.attention.reference_numpy_normalisers import sigmoid

SCORES = ["dot", "scaled_dot", "general", "additive", "location"]
NORMALISERS = ["softmax", "sparsemax", "entmax15", "hard", "sigmoid"]
MASKS = [None, "random", "fully_masked_row"]


def numpy_params(module: torch.nn.Module) -> dict:
    """A module's parameters as NumPy arrays, named as in its state_dict."""
    return {name: t.detach().numpy().copy() for name, t in module.state_dict().items()}


def make_score(name: str, d: int):
    """(torch score: a name or a float64 module, NumPy params)."""
    modules = {
        "general": lambda: GeneralScore(d, d),
        "additive": lambda: AdditiveScore(d, d, d_hidden=d + 2),
        "location": lambda: LocationScore(d, max_keys=8),
    }
    if name not in modules:
        return name, None
    module = modules[name]().double()
    return module, numpy_params(module)


def make_mask(kind, rng, b, tq, tk):
    if kind is None:
        return None
    mask = rng.random((b, tq, tk)) < 0.6
    mask[..., rng.integers(tk)] = True  # every row keeps a key ...
    if kind == "fully_masked_row":
        mask[0, tq - 1, :] = False  # ... except this one
    return mask


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("normaliser", NORMALISERS)
@pytest.mark.parametrize("score", SCORES)
@given(
    shape=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 6), st.integers(1, 5)),
    seed=st.integers(0, 2**32 - 1),
)
def test_attend_equals_numpy_reference(score, normaliser, mask_kind, shape, seed):
    b, tq, tk, d = shape
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    q, k = rng.normal(size=(b, tq, d)) * 2, rng.normal(size=(b, tk, d)) * 2
    v = rng.normal(size=(b, tk, 3))
    mask = make_mask(mask_kind, rng, b, tq, tk)
    torch_score, params = make_score(score, d)

    out = attend(
        *(torch.from_numpy(a) for a in (q, k, v)),
        None if mask is None else torch.from_numpy(mask),
        score=torch_score,
        normaliser=normaliser,
        return_scores=True,
    )
    steps = ref.attention(q, k, v, mask, score=score, normaliser=normaliser, params=params)

    np.testing.assert_allclose(steps.scaled_scores, out.scores.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(steps.weights, out.weights.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(steps.context, out.context.detach().numpy(), atol=1e-12)
    assert np.all(np.isfinite(steps.weights)) and np.all(np.isfinite(steps.context))
    if mask is not None:
        assert np.all(steps.weights[~mask] == 0)
        assert np.all(np.isneginf(steps.masked_scores[~mask]))
    if mask_kind == "fully_masked_row":
        assert np.all(steps.weights[0, -1] == 0) and np.all(steps.context[0, -1] == 0)


def test_scaled_dot_keeps_raw_and_scaled_scores():
    q, k = np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([[1.0, 1.0, 1.0, 1.0], [0, 0, 0, 2.0]])
    steps = ref.attention(q, k, k, score="scaled_dot")
    np.testing.assert_array_equal(steps.scores, [[10.0, 8.0]])
    assert steps.scale == 0.5
    np.testing.assert_array_equal(steps.scaled_scores, [[5.0, 4.0]])
    e = np.exp([1.0, 0.0])
    np.testing.assert_allclose(steps.weights, [e / e.sum()])


def test_sparsemax_worked_example():
    # z = (1, 0.5, -1): support {1, 2} since 1 + 2*0.5 > 1.5 but 1 + 3*(-1) < 0.5;
    # tau = (1.5 - 1) / 2 = 0.25 (Martins & Astudillo 2016, Alg. 1).
    np.testing.assert_allclose(ref.sparsemax_row(np.array([1.0, 0.5, -1.0])), [0.75, 0.25, 0])
    np.testing.assert_allclose(ref.sparsemax_row(np.array([3.0, -np.inf, 0.0])), [1, 0, 0])


def test_entmax15_worked_example():
    # z = (2, 0): x = z/2 = (1, 0); (1 - tau)^2 + tau^2 = 1 gives tau = 0, so p = (1, 0):
    # the second entry sits exactly on the threshold.
    np.testing.assert_allclose(ref.entmax15_row(np.array([2.0, 0.0])), [1.0, 0.0])
    # z = (1, 0): x = (0.5, 0); (0.5 - tau)^2 + tau^2 = 1 -> tau = (0.5 - sqrt(1.75)) / 2.
    tau = (0.5 - np.sqrt(1.75)) / 2
    expected = [(0.5 - tau) ** 2, tau**2]
    np.testing.assert_allclose(ref.entmax15_row(np.array([1.0, 0.0])), expected)
    np.testing.assert_allclose(sum(expected), 1.0)


@given(st.lists(st.floats(-5, 5), min_size=1, max_size=8))
def test_entmax15_is_a_distribution_of_the_right_form(z):
    z = np.array(z)
    p = ref.entmax15_row(z)
    np.testing.assert_allclose(p.sum(), 1.0, atol=1e-12)
    support = p > 0
    tau = z[support][0] / 2 - np.sqrt(p[support][0])  # p_i = (z_i/2 - tau)^2 on the support
    np.testing.assert_allclose(np.sqrt(p[support]), z[support] / 2 - tau, atol=1e-9)
    assert np.all(z[~support] / 2 <= tau + 1e-9)


def test_sigmoid_is_elementwise_with_exact_zeros():
    z = np.array([[0.0, np.log(3.0), -np.inf, -1000.0]])
    with np.errstate(all="raise"):  # no overflow warning for very negative scores
        p = sigmoid(z)
    np.testing.assert_allclose(p, [[0.5, 0.75, 0.0, 0.0]], rtol=0, atol=1e-15)
    assert p[0, 2] == 0
    np.testing.assert_array_equal(ref.normalise(z, "sigmoid"), p)


def test_hard_takes_the_first_maximum():
    np.testing.assert_array_equal(ref.hard_row(np.array([1.0, 3.0, 3.0, -np.inf])), [0, 1, 0, 0])


def test_unknown_names_are_rejected():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match="unknown score"):
        ref.attention(x, x, x, score="cosine")
    with pytest.raises(ValueError, match="unknown normaliser"):
        ref.attention(x, x, x, normaliser="maxout")
    with pytest.raises(ValueError, match="learned parameters"):
        ref.attention(x, x, x, score="general")


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"bias": False},
        {"kdim": 5, "vdim": 3},
        {"score": "dot", "normaliser": "sparsemax"},
        {"score": "general", "normaliser": "entmax15"},
        {"score": "additive", "normaliser": "hard"},
        {"score": "dot", "normaliser": "sigmoid"},
    ],
)
@pytest.mark.parametrize("with_mask", [False, True])
def test_multi_head_equals_numpy_reference(options, with_mask):
    rng = np.random.default_rng(7)
    b, tq, tk, d, h = 2, 3, 4, 8, 2
    mha = MultiHeadAttention(d, h, **options).double().eval()
    query = rng.normal(size=(b, tq, d))
    key = rng.normal(size=(b, tk, options.get("kdim", d)))
    value = rng.normal(size=(b, tk, options.get("vdim", d)))
    mask = None
    if with_mask:
        mask = rng.random((b, 1, tq, tk)) < 0.5
        mask[..., 0] = True
        mask[1, 0, 2, :] = False  # a fully masked query row
    out = mha(
        *(torch.from_numpy(a) for a in (query, key, value)),
        mask=None if mask is None else torch.from_numpy(mask),
        need_weights=True,
    )
    steps = ref.multi_head_attention(
        query,
        key,
        value,
        numpy_params(mha),
        h,
        mask,
        score=options.get("score", "scaled_dot"),
        normaliser=options.get("normaliser", "softmax"),
    )
    np.testing.assert_allclose(steps.weights, out.weights.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(steps.output, out.context.detach().numpy(), atol=1e-12)
    assert steps.q_heads.shape == (b, h, tq, d // h)
    if with_mask:
        assert np.all(steps.weights[1, :, 2] == 0) and np.all(steps.concat[1, 2] == 0)


def test_split_heads_takes_contiguous_feature_blocks():
    x = np.arange(2 * 3 * 6, dtype=float).reshape(2, 3, 6)
    heads = ref.split_heads(x, 3)
    np.testing.assert_array_equal(heads[1, 2, 0], x[1, 0, 4:6])
