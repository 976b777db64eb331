"""TransformerEncoderLayer / TransformerEncoder against torch.nn's, plus padding invariance."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from attnkit.attention import key_padding_mask, padding_mask
from attnkit.modules import TransformerEncoder, TransformerEncoderLayer

D, H, FF = 16, 4, 32
LENGTHS = torch.tensor([7, 4, 1])  # B = 3, T = 7, with padding in the last two
ATOL = 1e-5


def make_layer(activation="gelu", norm_first=False, seed=0) -> TransformerEncoderLayer:
    torch.manual_seed(seed)
    layer = TransformerEncoderLayer(
        D, H, FF, dropout=0.1, activation=activation, norm_first=norm_first
    )
    with torch.no_grad():  # non-trivial LayerNorm parameters, so a swapped norm would show
        for norm in (layer.norm1, layer.norm2):
            norm.weight.normal_(1.0, 0.2)
            norm.bias.normal_(0.0, 0.2)
    return layer.eval()


def to_torch(layer: TransformerEncoderLayer) -> nn.TransformerEncoderLayer:
    """A torch layer with the same weights (torch packs W^Q, W^K, W^V into in_proj)."""
    ref = nn.TransformerEncoderLayer(
        D,
        H,
        FF,
        dropout=0.1,
        activation=layer.activation,
        norm_first=layer.norm_first,
        batch_first=True,
    )
    a = layer.self_attn
    with torch.no_grad():
        ref.self_attn.in_proj_weight.copy_(
            torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight])
        )
        ref.self_attn.in_proj_bias.copy_(torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
        ref.self_attn.out_proj.load_state_dict(a.out_proj.state_dict())
        for name in ("linear1", "linear2", "norm1", "norm2"):
            getattr(ref, name).load_state_dict(getattr(layer, name).state_dict())
    return ref.eval()


def inputs(seed=1):
    torch.manual_seed(seed)
    x = torch.randn(len(LENGTHS), int(LENGTHS.max()), D)  # (B, T, D)
    keep = padding_mask(LENGTHS)  # (B, T), True = real token
    return x, keep


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("padded", [False, True], ids=["no-mask", "padding-mask"])
def test_layer_matches_torch(norm_first, activation, padded):
    layer = make_layer(activation, norm_first)
    ref = to_torch(layer)
    x, keep = inputs()
    with torch.no_grad():
        if padded:
            ours = layer(x, key_padding_mask(keep)).hidden
            theirs = ref(x, src_key_padding_mask=~keep)  # torch: True = padding
            real = keep
        else:
            ours, theirs = layer(x).hidden, ref(x)
            real = torch.ones_like(keep)
        weighted = layer(x, key_padding_mask(keep) if padded else None, need_weights=True)
    assert (ours - theirs).abs()[real].max() < ATOL
    # the readable path (weights requested) gives the same output as the fused one
    assert (weighted.hidden - ours).abs()[real].max() < ATOL


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_weights_shape_rows_and_padding_zero(norm_first):
    layer = make_layer(norm_first=norm_first)
    x, keep = inputs()
    with torch.no_grad():
        out = layer(x, key_padding_mask(keep), need_weights=True)
    b, t = keep.shape
    assert out.weights.shape == (b, H, t, t)
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(b, H, t))
    assert (out.weights.masked_select(~keep[:, None, None, :]) == 0).all()
    assert layer(x).weights is None  # not asked, not computed


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_masked_padding_changes_nothing(norm_first):
    """Garbage in padding positions, masked as keys, leaves real positions unchanged."""
    layer = make_layer(norm_first=norm_first)
    x, keep = inputs()
    noisy = torch.where(keep[..., None], x, 1e3 * torch.randn_like(x))
    with torch.no_grad():
        padded = layer(noisy, key_padding_mask(keep)).hidden
        for i, n in enumerate(LENGTHS.tolist()):
            alone = layer(x[i : i + 1, :n]).hidden  # the sentence alone, no padding at all
            assert (padded[i, :n] - alone[0]).abs().max() < ATOL


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_stack_matches_torch(norm_first):
    layers = [make_layer("relu", norm_first, seed=s) for s in range(3)]
    final = nn.LayerNorm(D) if norm_first else None
    stack = TransformerEncoder(layers, final).eval()
    ref = nn.TransformerEncoder(
        to_torch(layers[0]), num_layers=3, norm=final, enable_nested_tensor=False
    ).eval()
    for ref_layer, layer in zip(ref.layers, layers, strict=True):
        ref_layer.load_state_dict(to_torch(layer).state_dict())
    x, keep = inputs()
    with torch.no_grad():
        out = stack(x, key_padding_mask(keep), need_weights=True, output_hidden_states=True)
        theirs = ref(x, src_key_padding_mask=~keep)
    assert (out.last_hidden - theirs).abs()[keep].max() < ATOL
    assert len(out.hidden_states) == 4 and len(out.attentions) == 3
    assert out.hidden_states[0] is x
    expected_last = final(out.hidden_states[-1]) if final is not None else out.hidden_states[-1]
    torch.testing.assert_close(out.last_hidden, expected_last)
    assert all(w.shape == (3, H, 7, 7) for w in out.attentions)


def test_stack_returns_nothing_extra_unless_asked():
    stack = TransformerEncoder.from_layer(make_layer(), 2).eval()
    x, _ = inputs()
    out = stack(x)
    assert out.hidden_states is None and out.attentions is None
    # from_layer makes independent copies
    assert stack.layers[0].linear1.weight is not stack.layers[1].linear1.weight


def test_invalid_arguments_say_what_to_change():
    with pytest.raises(ValueError, match="activation"):
        TransformerEncoderLayer(D, H, FF, activation="swish")
    with pytest.raises(ValueError, match="divisible"):
        TransformerEncoderLayer(D, 3, FF)
    with pytest.raises(ValueError, match="num_layers"):
        TransformerEncoder.from_layer(make_layer(), 0)
