"""The Vision Transformer: patches, the class token, rollout maps and patch deletion."""

import numpy as np
import pytest
import torch

from attnkit.apps.vision.model import (
    ViT,
    ViTConfig,
    delete_patches,
    patchify,
    random_patches,
    rollout_maps,
    top_patches,
)
from attnkit.interpret.rollout import attention_rollout

SMALL = ViTConfig(image_size=8, patch_size=2, d_model=16, num_heads=2, num_layers=2, d_ff=32)


def test_patchify_matches_slicing():
    images = torch.randn(3, 3, 8, 4 * 2)  # (B, C, H, W), 4 x 4 patches of 2 x 2
    patches = patchify(images, 2)
    assert patches.shape == (3, 16, 2 * 2 * 3)
    for r in range(4):
        for c in range(4):
            block = images[:, :, 2 * r : 2 * r + 2, 2 * c : 2 * c + 2]  # (B, C, P, P)
            expected = block.permute(0, 2, 3, 1).reshape(3, -1)  # rows, columns, channels
            assert torch.equal(patches[:, r * 4 + c], expected)


def test_shapes_and_attention_rows():
    model = ViT(SMALL).eval()
    out = model(torch.rand(5, 1, 8, 8), need_weights=True)
    assert out.logits.shape == (5, 10)
    assert len(out.attentions) == 2
    for w in out.attentions:
        assert w.shape == (5, 2, 17, 17)  # (B, H, N + 1, N + 1): class token + 16 patches
        torch.testing.assert_close(w.sum(-1), torch.ones(5, 2, 17))
    fast = model(torch.rand(5, 1, 8, 8))
    assert fast.attentions is None
    x = torch.rand(4, 1, 8, 8)
    torch.testing.assert_close(model(x).logits, model(x, need_weights=True).logits)
    with pytest.raises(ValueError, match=r"expected images \(B, 1, 8, 8\)"):
        model(torch.rand(2, 8, 8))


def test_dropout_spares_the_attention_weights_unless_asked():
    """Dosovitskiy et al. App. B.1: dropout after the dense layers, none on the attention."""
    layers = ViT(SMALL).encoder.layers
    assert all(layer.self_attn.dropout == 0.0 for layer in layers)
    assert all(layer.dropout1.p == SMALL.dropout for layer in layers)
    cfg = ViTConfig(**{**SMALL.__dict__, "attention_dropout": 0.2})
    assert all(layer.self_attn.dropout == 0.2 for layer in ViT(cfg).encoder.layers)


def test_class_token_is_token_zero_and_the_only_one_read():
    model = ViT(SMALL).eval()
    x = torch.rand(3, 1, 8, 8)
    z0 = model.embed(x)  # (B, 17, D)
    expected = model.cls_token[0, 0] + model.positions.weight[0]
    for b in range(3):
        torch.testing.assert_close(z0[b, 0], expected)  # the same learned vector for all
    hidden = model.encoder(z0).last_hidden  # (B, 17, D)
    torch.testing.assert_close(model(x).logits, model.head(hidden[:, 0]))


def test_without_positions_the_class_token_ignores_patch_order():
    """Self-attention is permutation-equivariant, so the class token's output is invariant
    to the order of the patches once the positional embeddings are zero."""
    model = ViT(SMALL).eval()
    x = torch.rand(2, 1, 8, 8)
    perm = torch.randperm(16)
    patches = patchify(x, 2)[:, perm]  # (B, 16, 4)
    shuffled = patches.reshape(2, 4, 4, 2, 2).permute(0, 1, 3, 2, 4).reshape(2, 1, 8, 8)
    torch.testing.assert_close(patchify(shuffled, 2), patches)
    assert not torch.allclose(model(x).logits, model(shuffled).logits, atol=1e-4)
    with torch.no_grad():
        model.positions.weight.zero_()
    torch.testing.assert_close(model(x).logits, model(shuffled).logits, rtol=1e-4, atol=1e-5)


def test_rollout_maps_against_numpy_and_sums():
    model = ViT(SMALL).eval()
    pred = model.predict(torch.rand(4, 1, 8, 8))
    assert pred.maps.shape == (4, 4, 4)
    assert pred.classes.shape == (4,) and pred.probabilities.shape == (4, 10)
    for b in range(4):
        mats = []
        for w in pred.attentions:
            mean = w[b].mean(0).double().numpy()  # (T, T)
            mats.append(0.5 * mean + 0.5 * np.eye(17))  # rows already sum to 1
        r = mats[1] @ mats[0]  # (T, T): later layers on the left
        np.testing.assert_allclose(pred.maps[b].ravel(), r[0, 1:], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(pred.maps[b].sum() + r[0, 0], 1.0, rtol=1e-6)
        assert (pred.maps[b] >= 0).all()
        full = attention_rollout([w[b] for w in pred.attentions])
        np.testing.assert_allclose(pred.maps[b].ravel(), full[0, 1:])


def test_rollout_follows_attention_to_one_patch():
    """Every token attends only to patch 6 (token 7): the class token's map peaks there."""
    w = torch.zeros(2, 3, 17, 17)  # (B, H, T, T)
    w[..., 7] = 1.0
    maps = rollout_maps([w, w, w], grid=4)
    for b in range(2):
        assert np.unravel_index(maps[b].argmax(), maps[b].shape) == (1, 2)  # row 1, column 2
        np.testing.assert_allclose(maps[b].sum(), 1 - 0.5**3)  # the rest stays on the class token


def test_delete_patches_against_slicing():
    images = torch.rand(2, 1, 8, 8)
    patches = torch.tensor([[0, 5], [15, 3]])  # (B, k)
    out = delete_patches(images, patches, 2, fill=-1.0)
    expected = images.clone()
    for b, idx in enumerate(patches.tolist()):
        for p in idx:
            r, c = divmod(p, 4)
            expected[b, :, 2 * r : 2 * r + 2, 2 * c : 2 * c + 2] = -1.0
    torch.testing.assert_close(out, expected)
    mean = torch.full((1, 8, 8), 0.25)
    filled = delete_patches(images, patches, 2, fill=mean)
    assert (filled == 0.25).sum() == 2 * 2 * 4 and torch.equal(images, images.clone())


def test_top_and_random_patches():
    maps = np.array([[[0.1, 0.4], [0.3, 0.2]]])  # (1, 2, 2)
    assert top_patches(maps, 2).tolist() == [[1, 2]]
    g = torch.Generator().manual_seed(0)
    rand = random_patches(50, 16, 5, g)
    assert rand.shape == (50, 5) and rand.max() < 16
    assert all(len(set(row)) == 5 for row in rand.tolist())


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"patch_size": 3}, "patch_size 3 does not divide image_size 8; choose a divisor"),
        ({"num_heads": 3}, "num_heads 3 does not divide d_model 64; choose a divisor"),
        ({"channels": 2}, "channels must be 1 or 3, got 2"),
        ({"num_classes": 1}, "num_classes must be at least 2, got 1"),
        ({"patch_size": 0}, "patch_size must be at least 1, got 0"),
        ({"dropout": 1.0}, "dropout must be in [0, 1), got 1.0"),
    ],
)
def test_config_checks(changes, message):
    """Built in code, a ViTConfig checks its field bounds and the rules between fields."""
    with pytest.raises(ValueError) as err:
        ViTConfig(**changes)
    assert str(err.value) == message


def test_patch_tokens_see_their_patch_and_hybrid_tokens_see_neighbours():
    """Plain ViT: a pixel changes only its own patch's token. Hybrid (two 3 x 3 convolutions
    before the patches, Dosovitskiy et al. §3.1): it also reaches the neighbouring patches."""
    x = torch.rand(1, 1, 8, 8)
    y = x.clone()
    y[0, 0, 3, 3] += 1.0  # patch (1, 1) = token 1 + 5
    for stem, changed in (("patches", {6}), ("conv", {1, 2, 3, 5, 6, 7, 9, 10, 11})):
        cfg = ViTConfig(**{**SMALL.__dict__, "stem": stem, "stem_channels": 4, "dropout": 0.0})
        model = ViT(cfg).eval()
        diff = (model.embed(x) - model.embed(y)).abs().sum(-1)[0]  # (17,)
        assert {int(i) for i in torch.nonzero(diff > 1e-6)} == changed
    with pytest.raises(ValueError, match="^stem must be patches or conv, got 'cnn'$"):
        ViTConfig(stem="cnn")
