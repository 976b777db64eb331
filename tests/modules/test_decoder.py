"""TransformerDecoderLayer / TransformerDecoder against torch.nn's; caches; positions."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from attnkit.attention import causal_mask, key_padding_mask, padding_mask
from attnkit.modules.decoder import TransformerDecoder, TransformerDecoderLayer
from attnkit.modules.embeddings import TransformerEmbedding
from attnkit.modules.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    build_positional,
)

D, H, FF, T = 16, 4, 32, 6
SRC_LENGTHS = torch.tensor([7, 4, 1])  # B = 3, S = 7, source padding in the last two rows
ATOL = 1e-5


def make_layer(activation="relu", norm_first=False, seed=0) -> TransformerDecoderLayer:
    torch.manual_seed(seed)
    layer = TransformerDecoderLayer(
        D, H, FF, dropout=0.1, activation=activation, norm_first=norm_first
    )
    with torch.no_grad():  # non-trivial LayerNorms, so a swapped norm would show
        for norm in (layer.norm1, layer.norm2, layer.norm3):
            norm.weight.normal_(1.0, 0.2)
            norm.bias.normal_(0.0, 0.2)
    return layer.eval()


def copy_attention(ours, theirs: nn.MultiheadAttention) -> None:
    """torch packs ``in_proj_weight = [W_q; W_k; W_v]``."""
    with torch.no_grad():
        theirs.in_proj_weight.copy_(
            torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight])
        )
        theirs.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        theirs.out_proj.load_state_dict(ours.out_proj.state_dict())


def to_torch(layer: TransformerDecoderLayer) -> nn.TransformerDecoderLayer:
    ref = nn.TransformerDecoderLayer(
        D,
        H,
        FF,
        dropout=0.1,
        activation=layer.activation,
        norm_first=layer.norm_first,
        batch_first=True,
    )
    copy_attention(layer.self_attn, ref.self_attn)
    copy_attention(layer.multihead_attn, ref.multihead_attn)
    with torch.no_grad():
        for name in ("linear1", "linear2", "norm1", "norm2", "norm3"):
            getattr(ref, name).load_state_dict(getattr(layer, name).state_dict())
    return ref.eval()


def inputs(seed=1):
    torch.manual_seed(seed)
    x = torch.randn(len(SRC_LENGTHS), T, D)  # (B, T, D)
    memory = torch.randn(len(SRC_LENGTHS), int(SRC_LENGTHS.max()), D)  # (B, S, D)
    keep = padding_mask(SRC_LENGTHS)  # (B, S), True = real token
    return x, memory, keep


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_layer_matches_torch(norm_first, activation):
    layer = make_layer(activation, norm_first)
    ref = to_torch(layer)
    x, memory, keep = inputs()
    causal = causal_mask(T)  # (T, T), True = may attend
    with torch.no_grad():
        ours = layer(x, memory, causal, key_padding_mask(keep))
        weighted = layer(x, memory, causal, key_padding_mask(keep), need_weights=True)
        theirs = ref(x, memory, tgt_mask=~causal, memory_key_padding_mask=~keep)  # True=blocked
    assert (ours.hidden - theirs).abs().max() < ATOL
    assert (weighted.hidden - theirs).abs().max() < ATOL  # readable path == fused path
    assert ours.self_weights is None and ours.cross_weights is None and ours.cache is None


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_stack_matches_torch(norm_first):
    layers = [make_layer(norm_first=norm_first, seed=s) for s in range(2)]
    final = nn.LayerNorm(D) if norm_first else None
    ours = TransformerDecoder(layers, final).eval()
    ref = nn.TransformerDecoder(to_torch(layers[0]), 2, norm=final).eval()
    ref.layers[1] = to_torch(layers[1])
    x, memory, keep = inputs()
    causal = causal_mask(T)
    with torch.no_grad():
        out = ours(x, memory, causal, key_padding_mask(keep), need_weights=True)
        theirs = ref(x, memory, tgt_mask=~causal, memory_key_padding_mask=~keep)
    assert (out.last_hidden - theirs).abs().max() < ATOL
    assert len(out.self_attentions) == len(out.cross_attentions) == 2


def test_weights_causal_and_padding():
    layer = make_layer()
    x, memory, keep = inputs()
    with torch.no_grad():
        out = layer(x, memory, causal_mask(T), key_padding_mask(keep), need_weights=True)
    b, s = keep.shape
    assert out.self_weights.shape == (b, H, T, T)
    assert out.cross_weights.shape == (b, H, T, s)
    assert torch.allclose(out.self_weights.sum(-1), torch.ones(b, H, T), atol=1e-6)
    assert torch.allclose(out.cross_weights.sum(-1), torch.ones(b, H, T), atol=1e-6)
    assert (out.self_weights.masked_select(~causal_mask(T)) == 0).all()  # no peeking ahead
    assert (out.cross_weights.masked_select(~keep[:, None, None, :]) == 0).all()


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "readable"])
def test_cache_step_by_step_equals_full(norm_first, need_weights):
    layers = [make_layer(norm_first=norm_first, seed=s) for s in range(2)]
    stack = TransformerDecoder(layers, nn.LayerNorm(D) if norm_first else None).eval()
    x, memory, keep = inputs()
    mmask = key_padding_mask(keep)
    with torch.no_grad():
        full = stack(x, memory, causal_mask(T), mmask, need_weights=True)
        cache = stack.init_cache(memory)
        steps = []
        for t in range(T):
            out = stack(x[:, t : t + 1], None, None, mmask, need_weights, cache=cache)
            cache = out.cache
            steps.append(out)
    hidden = torch.cat([o.last_hidden for o in steps], 1)  # (B, T, D)
    assert (hidden - full.last_hidden).abs().max() < ATOL
    assert [len(c.self_attn) for c in cache] == [T, T]  # one position appended per step
    assert [c.self_attn.key.shape for c in cache] == [(len(keep), H, T, D // H)] * 2
    if need_weights:
        for t, out in enumerate(steps):
            for l in range(2):
                sw = out.self_attentions[l][:, :, 0]  # (B, H, t + 1)
                assert (sw - full.self_attentions[l][:, :, t, : t + 1]).abs().max() < ATOL
                cw = out.cross_attentions[l][:, :, 0]  # (B, H, S)
                assert (cw - full.cross_attentions[l][:, :, t]).abs().max() < ATOL


def test_cross_cache_is_the_projected_memory_and_reused():
    layer = make_layer()
    _, memory, _ = inputs()
    with torch.no_grad():
        cache = layer.init_cache(memory)
        k = layer.multihead_attn.k_proj(memory)  # (B, S, D)
        b, s, _ = memory.shape
        assert torch.equal(cache.cross_attn.key, k.view(b, s, H, D // H).transpose(1, 2))
        assert len(cache.self_attn) == 0
        out = layer(torch.randn(b, 1, D), None, cache=cache)
    # static: the same tensors come back, neither recomputed nor copied
    assert out.cache.cross_attn.key is cache.cross_attn.key
    assert out.cache.cross_attn.value is cache.cross_attn.value
    with pytest.raises(ValueError, match="memory is needed"):
        layer(torch.randn(b, 1, D), None)


def test_bad_activation_and_dropout():
    with pytest.raises(ValueError, match="activation"):
        TransformerDecoderLayer(D, H, FF, activation="tanh")
    with pytest.raises(ValueError, match="dropout"):
        TransformerDecoderLayer(D, H, FF, dropout=1.0)


# --- positions and embeddings (the decoder's Embed step) ---


def test_sinusoids_match_the_formula():
    pe = SinusoidalPositionalEncoding(D)(10)[0]  # (T, D)
    for pos in (0, 3, 9):
        for i in range(D // 2):
            angle = pos / 10000 ** (2 * i / D)  # Vaswani et al. 2017, §3.5
            assert math.isclose(pe[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(pe[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)
    assert SinusoidalPositionalEncoding(7)(3).shape == (1, 3, 7)  # odd width


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
def test_offset_gives_the_same_rows(kind):
    pos = build_positional(kind, D, max_len=20)
    full = pos(12)  # (1, 12, D)
    assert torch.equal(pos(3, offset=5), full[:, 5:8])
    per_row = pos(2, offset=torch.tensor([0, 4, 10]))  # (B, 2, D)
    assert per_row.shape == (3, 2, D)
    for row, start in enumerate((0, 4, 10)):
        assert torch.equal(per_row[row], full[0, start : start + 2])


def test_learned_positions_beyond_max_len_raise():
    with pytest.raises(ValueError, match="max_len"):
        LearnedPositionalEmbedding(4, D)(3, offset=2)
    with pytest.raises(ValueError, match="unknown positional"):
        build_positional("rotary", D)


def test_embedding_scale_positions_and_padding():
    emb = TransformerEmbedding(10, D, dropout=0.0, pad_id=0).eval()
    tokens = torch.tensor([[3, 4, 0]])  # (1, 3)
    out = emb(tokens)
    expected = emb.token.weight[tokens] * math.sqrt(D) + emb.position(3)  # Vaswani §3.4
    assert torch.allclose(out, expected)
    assert torch.equal(out[0, 2], emb.position(3)[0, 2])  # the pad embedding is zero
    assert torch.allclose(emb(tokens[:, 1:2], offset=1), out[:, 1:2])
