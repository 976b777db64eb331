"""The pointer-generator's copy mechanism (See et al. 2017, eqs. (8), (9)): the copy
distribution on a hand example, the mixture against its NumPy reference, its sum, its two
limits (``p_gen = 1``: a plain decoder; ``p_gen = 0``: pure copying), its gradients, and the
generation gate against its hand-computed formula."""

import numpy as np
import pytest
import torch

from attnkit.attention import (
    GenerationGate,
    copy_distribution,
    log_pointer_mixture,
    pointer_mixture,
)
from attnkit.attention.reference_numpy_coverage import pointer_mixture_numpy

B, T, S, V, N_EXT = 3, 4, 6, 8, 3


@pytest.fixture(autouse=True)
def _fp64():
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(torch.float32)


def _inputs(seed: int = 0, steps: bool = False):
    """Random ``p_vocab``, ``weights`` (rows summing to 1, the last source position padded),
    ``source_ids`` (vocabulary and extended ids, repeats likely) and ``p_gen``."""
    g = torch.Generator().manual_seed(seed)
    lead = (B, T) if steps else (B,)
    p_vocab = torch.softmax(torch.randn(*lead, V, generator=g), -1)
    scores = torch.randn(*lead, S, generator=g)
    scores[..., -1] = -torch.inf  # a padded source position
    weights = torch.softmax(scores, -1)
    source_ids = torch.randint(0, V + N_EXT, (B, S), generator=g)
    p_gen = torch.rand(*lead, generator=g)
    return p_vocab, weights, source_ids, p_gen


# the hand example: V = 5, the word 2 twice, two article OOVs 5 and 6, a padded position (id 0)
HAND_IDS = torch.tensor([[2, 5, 2, 6, 0]])
HAND_WEIGHTS = torch.tensor([[0.125, 0.25, 0.375, 0.25, 0.0]])


def test_copy_distribution_by_hand_sums_a_repeated_word():
    copied = copy_distribution(HAND_WEIGHTS, HAND_IDS, 7)
    expected = torch.tensor([[0.0, 0.0, 0.125 + 0.375, 0.0, 0.0, 0.25, 0.25]])
    assert torch.equal(copied, expected)
    steps = copy_distribution(HAND_WEIGHTS[:, None].expand(1, 2, 5), HAND_IDS, 7)  # (B, T, S)
    assert steps.shape == (1, 2, 7) and torch.equal(steps[:, 1], expected)


def test_mixture_by_hand_puts_one_minus_p_gen_times_the_weights_on_the_oovs():
    p_vocab = torch.tensor([[0.5, 0.25, 0.125, 0.0625, 0.0625]])
    mixture = pointer_mixture(p_vocab, HAND_WEIGHTS, HAND_IDS, torch.tensor([0.75]), 2)
    expected = torch.tensor(
        [[0.375, 0.1875, 0.09375 + 0.25 * 0.5, 0.046875, 0.046875, 0.25 * 0.25, 0.25 * 0.25]]
    )
    assert torch.equal(mixture, expected)


@pytest.mark.parametrize("steps", [False, True])
def test_mixture_matches_reference_sums_to_one_and_oovs_get_exactly_their_copy_mass(steps):
    p_vocab, weights, source_ids, p_gen = _inputs(seed=1, steps=steps)
    mixture = pointer_mixture(p_vocab, weights, source_ids, p_gen, N_EXT)
    assert mixture.shape == (*p_gen.shape, V + N_EXT)
    torch.testing.assert_close(mixture.sum(-1), torch.ones(p_gen.shape), rtol=0, atol=1e-14)
    if steps:  # the reference takes one (B, ...) step at a time
        rows = [(mixture[:, t], p_vocab[:, t], weights[:, t], p_gen[:, t]) for t in range(T)]
    else:
        rows = [(mixture, p_vocab, weights, p_gen)]
    for final, vocab, a, gate in rows:
        ref = pointer_mixture_numpy(vocab.numpy(), a.numpy(), source_ids.numpy(), gate, N_EXT)
        np.testing.assert_allclose(final.numpy(), ref, rtol=1e-13, atol=1e-15)
        for b in range(B):
            for i in range(S):
                w = int(source_ids[b, i])
                if w >= V and int((source_ids[b] == w).sum()) == 1:  # an OOV, once
                    assert final[b, w] == (1 - gate[b]) * a[b, i]


@pytest.mark.parametrize("steps", [False, True])
def test_p_gen_one_is_the_plain_decoder_and_zero_is_pure_copying(steps):
    p_vocab, weights, source_ids, p_gen = _inputs(seed=2, steps=steps)
    ones, zeros = torch.ones_like(p_gen), torch.zeros_like(p_gen)
    generating = pointer_mixture(p_vocab, weights, source_ids, ones, N_EXT)
    assert torch.equal(generating[..., :V], p_vocab)
    assert torch.equal(generating[..., V:], torch.zeros(*p_gen.shape, N_EXT))
    copying = pointer_mixture(p_vocab, weights, source_ids, zeros, N_EXT)
    assert torch.equal(copying, copy_distribution(weights, source_ids, V + N_EXT))


def test_gradients_reach_p_gen_weights_and_p_vocab():
    p_vocab, weights, source_ids, p_gen = _inputs(seed=3, steps=True)
    inputs = tuple(x[:2, :2].clone().requires_grad_(True) for x in (p_vocab, weights, p_gen))
    ids = source_ids[:2]

    def mixture(p_vocab, weights, p_gen):
        return pointer_mixture(p_vocab, weights, ids, p_gen, N_EXT)

    assert torch.autograd.gradcheck(mixture, inputs)
    mixture(*inputs)[..., 2].sum().backward()
    assert all(x.grad is not None and x.grad.abs().sum() > 0 for x in inputs)


def test_log_mixture_is_finite_where_an_extended_id_is_absent():
    p_vocab = torch.softmax(torch.randn(1, 5), -1)
    log_p = log_pointer_mixture(p_vocab, HAND_WEIGHTS, HAND_IDS, torch.tensor([0.5]), 3)
    final = pointer_mixture(p_vocab, HAND_WEIGHTS, HAND_IDS, torch.tensor([0.5]), 3)
    assert final[0, 7] == 0 and log_p[0, 7] == torch.log(torch.tensor(torch.finfo().tiny))
    torch.testing.assert_close(log_p[0, :7], torch.log(final[0, :7]), rtol=0, atol=0)
    floored = log_pointer_mixture(p_vocab, HAND_WEIGHTS, HAND_IDS, torch.ones(1), 3, floor=1e-9)
    torch.testing.assert_close(floored[0, 5:], torch.full((3,), np.log(1e-9)))


def test_generation_gate_is_the_sigmoid_of_eq_8():
    torch.manual_seed(0)
    gate = GenerationGate(d_context=4, d_state=6, d_input=3)
    with torch.no_grad():
        gate.b_ptr.fill_(0.3)
    h_star, s, x = torch.randn(B, T, 4), torch.randn(B, T, 6), torch.randn(B, T, 3)
    p_gen = gate(h_star, s, x)
    w_h, w_s, w_x = gate.w_h.weight[0], gate.w_s.weight[0], gate.w_x.weight[0]
    hand = torch.zeros(B, T)
    for b in range(B):
        for t in range(T):
            total = w_h @ h_star[b, t] + w_s @ s[b, t] + w_x @ x[b, t] + 0.3
            hand[b, t] = 1.0 / (1.0 + torch.exp(-total))
    torch.testing.assert_close(p_gen, hand, rtol=1e-14, atol=0)
    assert p_gen.shape == (B, T) and torch.all((p_gen > 0) & (p_gen < 1))
    assert gate(h_star[:, 0], s[:, 0], x[:, 0]).shape == (B,)  # one step


def test_bad_inputs_say_what_is_wrong():
    p_vocab, weights, source_ids, p_gen = _inputs()
    with pytest.raises(TypeError, match="long"):
        copy_distribution(weights, source_ids.int(), V + N_EXT)
    with pytest.raises(ValueError, match="source_ids"):
        copy_distribution(weights, source_ids[:, :3], V + N_EXT)
    with pytest.raises(ValueError, match="leading axes"):
        pointer_mixture(p_vocab[:2], weights, source_ids, p_gen, N_EXT)
    with pytest.raises(ValueError, match="p_gen"):
        pointer_mixture(p_vocab, weights, source_ids, p_gen[:2], N_EXT)
    with pytest.raises(ValueError, match="n_extended"):
        pointer_mixture(p_vocab, weights, source_ids, p_gen, -1)
