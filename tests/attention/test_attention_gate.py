"""The attention gate (Oktay et al. 2018, eqs. (1)-(2)): MONAI's AttentionBlock with copied
weights, a constant gating signal, shapes and resampling, masks, and AdditiveScore.score_paired."""

import pytest
import torch
import torch.nn.functional as F

from attnkit.attention import AdditiveScore, AttentionGate, GateOutput, build_score

INF = float("-inf")


def monai_block(f_x, f_g, f_int):
    """MONAI's AttentionBlock with random BatchNorm affine parameters and running statistics."""
    attentionunet = pytest.importorskip("monai.networks.nets.attentionunet")
    block = attentionunet.AttentionBlock(spatial_dims=2, f_int=f_int, f_g=f_g, f_l=f_x)
    with torch.no_grad():
        for bn in (block.W_g[1], block.W_x[1], block.psi[1]):
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_()
            bn.running_mean.normal_()
            bn.running_var.uniform_(0.5, 2.0)
    return block


MONAI_NAMES = {  # MONAI's AttentionBlock -> AttentionGate(norm=True)
    "W_x.0.conv": "score.W_key",
    "W_g.0.conv": "score.W_query",
    "psi.0.conv": "score.v",
    "W_x.1": "norm_x",
    "W_g.1": "norm_g",
    "psi.1": "norm_psi",
}


def ours(name: str) -> str:
    module, leaf = name.rsplit(".", 1)
    return f"{MONAI_NAMES[module]}.{leaf}"


def copy_from_monai(gate: AttentionGate, block) -> None:
    """MONAI's 1x1 convolutions ``(out, in, 1, 1)`` as the score's linear maps ``(out, in)``."""
    mine = {
        ours(name): t.flatten(1) if t.dim() == 4 else t for name, t in block.state_dict().items()
    }
    gate.load_state_dict(mine, strict=True)


def inputs(b=2, f_x=6, f_g=5, h=7, w=9, gh=None, gw=None, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(b, f_x, h, w, generator=gen, dtype=dtype)
    g = torch.randn(b, f_g, gh or h, gw or w, generator=gen, dtype=dtype)
    return x.requires_grad_(), g.requires_grad_()


@pytest.mark.parametrize("train", [False, True])
def test_gate_reproduces_monai_attention_block(train):
    torch.manual_seed(0)
    block = monai_block(f_x=6, f_g=5, f_int=4)
    gate = AttentionGate(6, 5, 4, norm=True)
    copy_from_monai(gate, block)
    block.train(train)
    gate.train(train)
    x, g = inputs()
    x2, g2 = (t.detach().clone().requires_grad_() for t in (x, g))

    theirs = block(g, x)  # MONAI: forward(g, x), g on x's grid, returns x * psi
    out = gate(x2, g2)
    torch.testing.assert_close(out.gated, theirs, atol=1e-5, rtol=0)
    torch.testing.assert_close(out.gated, x2 * out.weights)

    upstream = torch.randn_like(theirs)
    names, params = zip(*block.named_parameters(), strict=True)
    grads_theirs = torch.autograd.grad(theirs, (x, g, *params), upstream)
    mine = dict(gate.named_parameters())
    grads_mine = torch.autograd.grad(out.gated, (x2, g2, *(mine[ours(n)] for n in names)), upstream)
    for name, mine, ref in zip(("x", "g", *names), grads_mine, grads_theirs, strict=True):
        torch.testing.assert_close(mine, ref.view_as(mine), atol=1e-5, rtol=0, msg=name)
    for theirs_bn, ours_bn in ((block.W_x[1], gate.norm_x), (block.psi[1], gate.norm_psi)):
        torch.testing.assert_close(ours_bn.running_mean, theirs_bn.running_mean)
        torch.testing.assert_close(ours_bn.running_var, theirs_bn.running_var)


def test_parameter_count_matches_monai():
    block = monai_block(32, 32, 16)
    assert sum(p.numel() for p in AttentionGate(32, 32, 16, norm=True).parameters()) == sum(
        p.numel() for p in block.parameters()
    )  # 1139
    assert sum(p.numel() for p in AttentionGate(32, 32, 16).parameters()) == (32 + 32 + 3) * 16 + 1


def by_hand(gate: AttentionGate, x, gamma):
    """eq. (1)-(2) for a constant gating vector ``gamma``, written on the (B, C, H, W) grid."""
    s = gate.score
    c = s.W_query.weight @ gamma + s.W_query.bias  # (F_int,) the same at every pixel
    hidden = torch.einsum("kc,bchw->bkhw", s.W_key.weight, x)  # (B, F_int, H, W)
    hidden = hidden + (s.W_key.bias + c)[:, None, None]
    logit = torch.einsum("k,bkhw->bhw", s.v.weight[0], hidden.relu()) + s.v.bias  # (B, H, W)
    return torch.sigmoid(logit).unsqueeze(1)  # (B, 1, H, W)


def constant(gamma, b, h, w):
    return gamma[None, :, None, None].expand(b, -1, h, w)  # (B, Fg, h, w)


def test_constant_gating_signal_is_a_fixed_per_pixel_function_of_x():
    torch.manual_seed(1)
    gate = AttentionGate(6, 5, 4).double()
    x, _ = inputs(dtype=torch.float64)
    gamma = torch.randn(5, dtype=torch.float64)
    weights = gate(x, constant(gamma, 2, 7, 9)).weights
    torch.testing.assert_close(weights, by_hand(gate, x, gamma))
    # the same constant at a coarser scale resamples to the same constant
    torch.testing.assert_close(gate(x, constant(gamma, 2, 4, 5)).weights, weights)
    # no spatial context: shuffling x's pixels shuffles the weights the same way
    perm = torch.randperm(7 * 9)
    shuffled = x.flatten(2)[..., perm].view_as(x)
    torch.testing.assert_close(
        gate(shuffled, constant(gamma, 2, 7, 9)).weights.flatten(2), weights.flatten(2)[..., perm]
    )


def test_two_constant_gating_signals_are_related_through_w_g():
    torch.manual_seed(2)
    gate = AttentionGate(6, 5, 3).double()
    x, _ = inputs(dtype=torch.float64)
    gamma = torch.randn(5, dtype=torch.float64)
    w_g = gate.score.W_query.weight.detach()  # (3, 5): it has a null space
    null = torch.linalg.svd(w_g).Vh[-1]  # W_g @ null = 0
    same = gate(x, constant(gamma + 3 * null, 2, 7, 9)).weights
    torch.testing.assert_close(same, gate(x, constant(gamma, 2, 7, 9)).weights)
    # with every hidden unit active the ReLU is linear: another constant shifts every pixel's
    # logit by the same psi^T W_g (gamma2 - gamma1)
    with torch.no_grad():
        gate.score.v.weight.mul_(0.1)
        gate.score.W_key.bias.fill_(30.0)
        gate.score.v.bias.fill_(-30.0 * gate.score.v.weight.sum())
    gamma2 = torch.randn(5, dtype=torch.float64)
    logit1 = torch.logit(gate(x, constant(gamma, 2, 7, 9)).weights)
    logit2 = torch.logit(gate(x, constant(gamma2, 2, 7, 9)).weights)
    shift = gate.score.v.weight[0] @ w_g @ (gamma2 - gamma)
    torch.testing.assert_close(logit2 - logit1, shift.expand_as(logit1).detach())


def test_coarse_gating_signal_is_resampled_to_the_skip_grid():
    torch.manual_seed(3)
    gate = AttentionGate(6, 5, 4)
    x, g = inputs(h=8, w=10, gh=4, gw=5)
    out = gate(x, g)
    assert isinstance(out, GateOutput)
    assert out.weights.shape == (2, 1, 8, 10) and out.gated.shape == (2, 6, 8, 10)
    assert torch.all((out.weights >= 0) & (out.weights <= 1))
    upsampled = F.interpolate(g, size=(8, 10), mode="bilinear", align_corners=False)
    torch.testing.assert_close(out.weights, gate(x, upsampled).weights)
    # odd sizes, and the gate differs from one with nearest resampling (the test can fail)
    x, g = inputs(h=7, w=9, gh=4, gw=5)
    nearest = F.interpolate(g, size=(7, 9), mode="nearest")
    assert not torch.allclose(gate(x, g).weights, gate(x, nearest).weights)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_mask_gives_exact_zeros_and_leaves_other_pixels_alone():
    torch.manual_seed(4)
    gate = AttentionGate(6, 5, 4)
    x, g = inputs(h=6, w=6, gh=3, gw=3)
    mask = torch.rand(2, 6, 6) < 0.5
    mask[1] = False  # an image with nothing to attend
    out = gate(x, g, mask)
    assert torch.all(out.weights[:, 0][~mask] == 0) and torch.all(
        out.gated.transpose(0, 1)[:, ~mask] == 0
    )
    torch.testing.assert_close(gate(x, g, mask[:, None]).weights, out.weights)  # (B, 1, H, W)
    free = gate(x, g).weights  # sigmoid gates are independent: the others do not change
    torch.testing.assert_close(out.weights[:, 0][mask], free[:, 0][mask])
    # a competing normaliser over the pixels: no NaN for the empty image, rows sum to 1
    soft = AttentionGate(6, 5, 4, normaliser="softmax")
    with torch.autograd.detect_anomaly():  # no NaN anywhere, forward or backward
        weights = soft(x, g, mask).weights
        (weights * torch.randn_like(weights)).sum().backward()
    assert torch.all(weights[1] == 0)
    torch.testing.assert_close(weights[0].sum(), torch.tensor(1.0))


def test_bad_normalisers_are_rejected():
    with pytest.raises(ValueError, match="deterministic"):
        AttentionGate(4, 4, 2, normaliser="sample")
    with pytest.raises(ValueError, match="unknown normaliser"):
        AttentionGate(4, 4, 2, normaliser="maxout")


@pytest.mark.parametrize("norm", [False, True])
def test_gate_gradcheck(norm):
    torch.manual_seed(5)
    gate = AttentionGate(3, 2, 2, norm=norm).double()
    x, g = inputs(f_x=3, f_g=2, h=4, w=4, gh=2, gw=2, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x, g: gate(x, g).gated, (x, g))


@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("biases", [(False, False), (True, True)])
def test_score_paired_is_the_diagonal_of_the_full_score(activation, biases):
    torch.manual_seed(6)
    score = AdditiveScore(5, 3, 7, activation=activation, key_bias=biases[0], out_bias=biases[1])
    q, k = torch.randn(2, 3, 6, 5), torch.randn(2, 3, 6, 3)  # (B, H, T, D)
    full = score(q, k)  # (B, H, T, T)
    paired = score.score_paired(q, k)  # (B, H, T)
    torch.testing.assert_close(paired, full.diagonal(dim1=-2, dim2=-1))
    assert paired.shape == (2, 3, 6)
    flat_q, flat_k = q.flatten(0, 1), k.flatten(0, 1)  # (B*H, T, D)
    first = score.score_paired(flat_q.mT, flat_k.mT, channels_first=True)  # from (B*H, D, T)
    torch.testing.assert_close(first, paired.flatten(0, 1))
    one_query = q[:, :1]  # (B, 1, T, D): the leading axes broadcast
    torch.testing.assert_close(
        score.score_paired(one_query, k), score(one_query, k).diagonal(dim1=-2, dim2=-1)
    )


def test_additive_score_defaults_are_bahdanau_and_options_are_checked():
    score = AdditiveScore(4, 3, 5)
    assert set(score.state_dict()) == {"W_key.weight", "W_query.weight", "W_query.bias", "v.weight"}
    q, k = torch.randn(2, 4), torch.randn(6, 3)
    hand = torch.tanh(score.W_query(q)[:, None] + score.W_key(k)[None]) @ score.v.weight[0]
    torch.testing.assert_close(score(q, k), hand)  # (Tq, Tk)
    relu = build_score("additive", 4, 3, d_hidden=5, activation="relu", out_bias=True)
    assert relu.activation == "relu" and relu.v.bias is not None and relu.W_key.bias is None
    with pytest.raises(ValueError, match="activation"):
        AdditiveScore(4, activation="sigmoid")
