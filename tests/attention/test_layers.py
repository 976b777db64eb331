"""Bahdanau, Luong (dot / general / concat) and location attention layers, written out by hand."""

import pytest
import torch

from attnkit.attention import (
    AdditiveAttention,
    LocationAttention,
    MultiplicativeAttention,
    attend,
    build_score,
)


@pytest.fixture(autouse=True)
def _fp64():
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(torch.float32)


def test_additive_is_bahdanau_eq_5_6():
    layer = AdditiveAttention(d_query=5, d_key=7, d_hidden=4)
    s, h = torch.randn(2, 1, 5), torch.randn(2, 6, 7)  # decoder state s_{i-1}, annotations h_j
    out = layer(s, h)
    sc = layer.score
    e = torch.stack(
        [
            torch.stack(
                [
                    sc.v.weight[0] @ torch.tanh(sc.W_query(s[b, 0]) + sc.W_key(h[b, j]))
                    for j in range(6)
                ]
            )
            for b in range(2)
        ]
    )  # e_ij, (B, Tk)
    alpha = torch.softmax(e, -1)  # eq. (6)
    torch.testing.assert_close(out.weights[:, 0], alpha)
    torch.testing.assert_close(out.context[:, 0], (alpha[..., None] * h).sum(1))  # eq. (5)


def test_luong_dot_general_concat():
    ht, hs = torch.randn(3, 2, 6), torch.randn(3, 5, 6)
    dot = MultiplicativeAttention(6, method="dot")
    torch.testing.assert_close(dot(ht, hs).weights, torch.softmax(ht @ hs.transpose(1, 2), -1))
    general = MultiplicativeAttention(6, 6, method="general")
    W = general.score.W.weight  # (Dq, Dk)
    expected = torch.einsum("bqd,de,bke->bqk", ht, W, hs)  # h_t^T W_a h_s
    torch.testing.assert_close(general(ht, hs).weights, torch.softmax(expected, -1))
    concat = MultiplicativeAttention(6, method="concat", d_hidden=3)
    sc = concat.score
    Wa = torch.cat([sc.W_query.weight, sc.W_key.weight], dim=1)  # W_a [h_t; h_s]
    pair = torch.cat([ht[:, :, None].expand(3, 2, 5, 6), hs[:, None].expand(3, 2, 5, 6)], -1)
    e = (torch.tanh(pair @ Wa.T + sc.W_query.bias) @ sc.v.weight.T)[..., 0]
    torch.testing.assert_close(concat(ht, hs).weights, torch.softmax(e, -1))


def test_location_depends_on_query_only():
    layer = LocationAttention(d_query=4, max_keys=8)
    q = torch.randn(2, 3, 4)
    a = layer(q, torch.randn(2, 6, 5), torch.randn(2, 6, 2)).weights
    b = layer(q, torch.randn(2, 6, 5), torch.randn(2, 6, 2)).weights
    torch.testing.assert_close(a, b)  # a_t = softmax(W_a h_t), whatever the source says
    torch.testing.assert_close(a, torch.softmax(layer.score.W(q)[..., :6], -1))
    with pytest.raises(ValueError, match="max_keys=8"):
        layer(q, torch.randn(2, 9, 5))


def test_layers_respect_source_padding_and_normaliser():
    layer = AdditiveAttention(4, normaliser="sparsemax")
    q, h = torch.randn(2, 3, 4), torch.randn(2, 5, 4) * 4
    keep = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    out = layer(q, h, mask=keep[:, None, :])
    assert torch.all(out.weights[1, :, 3:] == 0)
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(2, 3))
    alone = layer(q[1:], h[1:, :3])
    torch.testing.assert_close(out.context[1:], alone.context)


def test_learned_scores_plug_into_attend():
    score = build_score("general", 4, 6)
    q, k = torch.randn(2, 3, 4), torch.randn(2, 5, 6)
    out = attend(q, k, k, score=score, need_weights=False)
    # learned scores use the readable path, and say so
    assert out.path == "readable" and "is not dot-product" in out.reason


def test_layer_errors():
    with pytest.raises(ValueError, match="equal query and key widths"):
        MultiplicativeAttention(4, 6, method="dot")
    with pytest.raises(ValueError, match="unknown Luong method"):
        MultiplicativeAttention(4, method="bilinear")
    with pytest.raises(ValueError, match="max_keys"):
        build_score("location", 4)


@pytest.mark.parametrize(
    "layer",
    [
        lambda: AdditiveAttention(4, 6, 5),
        lambda: MultiplicativeAttention(4, 6, method="general"),
        lambda: MultiplicativeAttention(4, 4, method="dot"),
        lambda: LocationAttention(4, max_keys=9),
    ],
)
def test_prepared_keys_give_the_same_attention(layer):
    layer = layer()
    d_key = 4 if getattr(layer, "method", "") == "dot" else 6
    q, h = torch.randn(2, 3, 4), torch.randn(2, 7, d_key)
    mask = torch.rand(2, 1, 7) > 0.3
    plain = layer(q, h, mask=mask)
    prepared = layer(q, h, mask=mask, prepared_key=layer.prepare_key(h))
    torch.testing.assert_close(prepared.weights, plain.weights)
    torch.testing.assert_close(prepared.context, plain.context)
