"""Normalisers: distributions, sparsity, gradients (gradcheck), hard and stochastic attention."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnkit.attention import attend, reinforce_loss
from attnkit.attention import normalisers as N

INF = float("-inf")


@pytest.mark.parametrize("fn", [N.softmax, N.sparsemax, N.entmax15, N.sigmoid])
def test_gradcheck_dense_and_sparse(fn):
    # sparsemax and entmax15 are custom autograd Functions (entmax package): check them in fp64
    torch.manual_seed(3)
    x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fn, (x,))
    # and through attend with a mask, where masked keys arrive as -inf
    q = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 5, 4, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 5, 2, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True, True, False, False]] * 3)
    norm = fn.__name__
    assert torch.autograd.gradcheck(
        lambda q, k, v: attend(q, k, v, mask, normaliser=norm).context, (q, k, v)
    )


@given(st.integers(2, 12), st.floats(0.1, 10.0), st.integers(0, 999))
def test_sparse_normalisers_are_distributions_and_sparsemax_is_a_projection(tk, temp, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, tk, generator=g, dtype=torch.float64) * temp
    for fn in (N.sparsemax, N.entmax15):
        p = fn(x)
        assert torch.all(p >= 0)
        torch.testing.assert_close(p.sum(-1), torch.ones(4, dtype=torch.float64))
    # sparsemax(x) = argmin_p ||p - x||^2 on the simplex: no random simplex point is closer
    p = N.sparsemax(x)
    others = torch.distributions.Dirichlet(torch.ones(tk, dtype=torch.float64)).sample((200,))
    best = (p - x).square().sum(-1)  # (4,)
    assert torch.all((others[:, None] - x).square().sum(-1) >= best - 1e-9)


def test_sparsemax_known_values():
    # the two-point case: sparsemax([z, 0]) = [ (z+1)/2, (1-z)/2 ] clipped to [0, 1]
    x = torch.tensor([[0.5, 0.0], [3.0, 0.0], [1.0, 1.0]])
    torch.testing.assert_close(N.sparsemax(x), torch.tensor([[0.75, 0.25], [1, 0], [0.5, 0.5]]))
    # entmax15 of equal scores is uniform; of very different ones is one-hot
    torch.testing.assert_close(N.entmax15(torch.zeros(1, 4)), torch.full((1, 4), 0.25))
    torch.testing.assert_close(
        N.entmax15(torch.tensor([[10.0, 0, 0]])), torch.tensor([[1.0, 0, 0]])
    )


@pytest.mark.parametrize("fn", [N.softmax, N.sparsemax, N.entmax15, N.hard, N.sigmoid])
def test_minus_inf_padding_changes_nothing(fn):
    x = torch.randn(3, 5)
    padded = torch.cat([x, torch.full((3, 4), INF)], dim=-1)
    out = fn(padded)
    torch.testing.assert_close(out[:, :5], fn(x))
    assert torch.all(out[:, 5:] == 0)


def test_sigmoid_gates_are_independent_and_never_take_the_fused_kernel():
    # sigmoid gating (Oktay et al. 2018, eq. (2)): each key on its own, not a distribution
    x = torch.tensor([[0.0, 2.0, -1.0, INF], [INF, INF, INF, INF]])
    w = N.sigmoid(x)
    torch.testing.assert_close(w[0, :3], 1 / (1 + torch.exp(-x[0, :3])))
    assert torch.all(w[0, 3] == 0) and torch.all(w[1] == 0)  # masked keys: exactly 0
    bumped = x.clone()
    bumped[0, 1] = 5.0
    torch.testing.assert_close(N.sigmoid(bumped)[0, [0, 2]], w[0, [0, 2]])  # no competition
    assert N.NORMALISERS["sigmoid"] is N.sigmoid
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    mask = torch.ones(2, 3, 5, dtype=torch.bool)
    mask[0, 1, 2:] = False
    mask[1, 2] = False  # a query with no key at all
    out = attend(q, k, v, mask, score="dot", normaliser="sigmoid")
    expected = torch.sigmoid((q @ k.transpose(1, 2)).masked_fill(~mask, INF))
    torch.testing.assert_close(out.weights, expected)
    torch.testing.assert_close(out.context, expected @ v)
    fast = attend(q, k, v, mask, score="dot", normaliser="sigmoid", need_weights=False)
    assert fast.path == "folded" and fast.reason == "normaliser 'sigmoid' is not softmax"
    torch.testing.assert_close(fast.context, out.context)


def test_hard_is_one_hot_with_softmax_gradient():
    x = torch.randn(4, 6, requires_grad=True)
    y = N.hard(x)
    assert torch.all((y == 0) | (y == 1)) and torch.all(y.sum(-1) == 1)
    assert torch.equal(y.argmax(-1), x.argmax(-1))
    w = torch.randn(4, 6)
    (g_hard,) = torch.autograd.grad((y * w).sum(), x)
    (g_soft,) = torch.autograd.grad((torch.softmax(x, -1) * w).sum(), x)
    torch.testing.assert_close(g_hard, g_soft)  # straight-through


def test_gumbel_samples_follow_softmax():
    logits = torch.tensor([1.0, 0.0, -1.0, INF])
    g = torch.Generator().manual_seed(0)
    draws = N.gumbel(logits.expand(20000, 4), tau=0.5, hard=True, generator=g)
    freq = draws.mean(0)
    expected = torch.softmax(logits, -1)  # the Gumbel-max trick: argmax(s + g) ~ softmax(s)
    torch.testing.assert_close(freq, expected, atol=0.015, rtol=0)
    assert freq[3] == 0
    soft = N.gumbel(logits.expand(5, 4), tau=1.0, hard=False, generator=g)
    torch.testing.assert_close(soft.sum(-1), torch.ones(5))
    assert torch.all((soft[:, :3] > 0) & (soft[:, :3] < 1)) and torch.all(soft[:, 3] == 0)
    with pytest.raises(ValueError, match="tau"):
        N.gumbel(logits, tau=0)


def test_sample_frequencies_and_log_prob():
    scores = torch.tensor([2.0, 0.0, 1.0, INF])
    g = torch.Generator().manual_seed(0)
    weights, log_prob = N.sample(scores.expand(20000, 4), generator=g)
    torch.testing.assert_close(weights.mean(0), torch.softmax(scores, -1), atol=0.015, rtol=0)
    chosen = weights.argmax(-1)
    torch.testing.assert_close(log_prob, torch.log_softmax(scores, -1)[chosen])


def test_reinforce_gradient_is_unbiased_estimate_of_expected_reward_gradient():
    # E_s[r(s)] = sum_s p_s r_s; its exact gradient w.r.t. the scores is p * (r - E[r]).
    scores = torch.tensor([0.5, -0.3, 0.2], requires_grad=True)
    reward_table = torch.tensor([1.0, 0.0, 3.0])
    g = torch.Generator().manual_seed(1)
    weights, log_prob = N.sample(scores.expand(40000, 3), generator=g)
    reward = (weights * reward_table).sum(-1)
    loss = reinforce_loss(log_prob, reward, baseline=reward.mean())
    (grad,) = torch.autograd.grad(-loss, scores)
    p = torch.softmax(scores.detach(), -1)
    exact = p * (reward_table - (p * reward_table).sum())
    torch.testing.assert_close(grad, exact, atol=0.02, rtol=0)


def test_attend_sample_returns_log_prob_and_one_hot_context():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    out = attend(q, k, v, normaliser="sample", normaliser_options={"generator": None})
    assert out.log_prob.shape == (2, 3)
    chosen = out.weights.argmax(-1)  # (B, Tq)
    torch.testing.assert_close(out.context, v[torch.arange(2)[:, None], chosen])
    scores = q @ k.transpose(1, 2) / 2.0
    torch.testing.assert_close(
        out.log_prob, torch.log_softmax(scores, -1).gather(-1, chosen[..., None])[..., 0]
    )
