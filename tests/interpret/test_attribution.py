"""Attention x gradient and gradient rollout (attnkit.interpret.attribution), on a hand-written
attention model, attnkit's own models and Hugging Face models (attnkit.hf.attribute).

The gradients ``dy/dA`` are checked against central finite differences: a perturbation ``delta``
is added to one attention weight after the softmax, inside the forward pass, and
``(y(+eps) - y(-eps)) / 2 eps`` must match the returned gradient in float64.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from attnkit.interpret.attribution import (
    attention_gradient_scores,
    attention_gradients,
    attention_times_gradient,
    attribute,
    gradient_rollout,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
EPS = 1e-6


# ---- a tiny attention stack whose weights can be perturbed --------------------------------


class TinyStack:
    """``L`` residual self-attention layers over ``x (1, T, D)`` and ``y = x_L[0, 0] . w``; the
    optional ``delta`` ``(L, H, T, T)`` is added to the weights after the softmax."""

    def __init__(self, layers=2, heads=2, tokens=5, width=6, seed=0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.heads = heads
        self.x = torch.randn(1, tokens, width, generator=g, dtype=torch.float64).requires_grad_()
        self.w = [
            torch.randn(3, width, width, generator=g, dtype=torch.float64) for _ in range(layers)
        ]
        self.out = torch.randn(width, generator=g, dtype=torch.float64)

    def __call__(self, delta=None):
        x, attentions = self.x, []
        b, t, d = x.shape
        for l, w in enumerate(self.w):
            q, k, v = (
                (x @ m).view(b, t, self.heads, d // self.heads).transpose(1, 2) for m in w
            )  # (B, H, T, Dh) each
            a = (q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5).softmax(-1)  # (B, H, T, T)
            attentions.append(a)
            a = a if delta is None else a + delta[l]
            x = x + (a @ v).transpose(1, 2).reshape(b, t, d)  # (B, T, D)
        return (x[0, 0] * self.out).sum(), tuple(attentions)


def finite_difference(run, shape, index) -> float:
    """``(y(+eps) - y(-eps)) / 2 eps`` with ``eps`` added at ``index`` of a zero ``delta``."""
    values = []
    for sign in (1, -1):
        delta = torch.zeros(shape, dtype=torch.float64)
        delta[index] = sign * EPS
        with torch.no_grad():
            values.append(float(run(delta)))
    return (values[0] - values[1]) / (2 * EPS)


def test_gradients_match_finite_differences_on_a_tiny_stack():
    model = TinyStack(layers=3, heads=2, tokens=5)
    y, attentions = model()
    weights, grads = attention_gradients(attentions, y)
    assert len(grads) == 3 and all(g.shape == (2, 5, 5) for g in grads)
    rng = np.random.default_rng(0)
    for _ in range(12):
        index = tuple(int(rng.integers(n)) for n in (3, 2, 5, 5))  # (layer, head, query, key)
        fd = finite_difference(lambda d: model(d)[0], (3, 1, 2, 5, 5), (index[0], 0, *index[1:]))
        assert grads[index[0]][index[1:]].item() == pytest.approx(fd, abs=1e-4, rel=1e-4)
    products = attention_times_gradient(weights, grads)
    assert torch.equal(products[1], weights[1] * grads[1])


def test_the_last_layer_gradient_sits_on_the_read_row_only():
    y, attentions = TinyStack(layers=2)()
    weights, grads = attention_gradients(attentions, y)
    assert grads[-1][:, 1:].abs().max() == 0 and grads[-1][:, 0].abs().max() > 0
    whole = attention_gradient_scores(weights, grads)  # every row: the read row alone counts
    np.testing.assert_allclose(whole, attention_gradient_scores(weights, grads, query=0))
    np.testing.assert_allclose(whole, (weights[-1] * grads[-1]).sum((0, 1)).numpy())
    both = attention_gradient_scores(weights, grads, layer=None)
    by_hand = sum((w * g).sum((0, 1)) for w, g in zip(weights, grads, strict=True))
    np.testing.assert_allclose(both, by_hand)
    short_w, short_g = attention_gradients(*TinyStack(layers=2)()[::-1], length=3)
    assert torch.equal(short_g[0], grads[0][:, :3, :3]) and short_w[1].shape == (2, 3, 3)


def test_detached_attention_and_non_scalar_targets_are_refused():
    y, attentions = TinyStack()()
    with pytest.raises(ValueError, match="not in the autograd graph"):
        attention_gradients([a.detach() for a in attentions], y)
    with pytest.raises(ValueError, match="must be a scalar"):
        attention_gradients(attentions, torch.stack([y, y]))
    other = TinyStack()  # a second forward pass: its attentions did not make y
    with pytest.raises(ValueError, match="does not depend on these attention"):
        attention_gradients(other()[1], y)


# ---- gradient rollout against Chefer, Gur & Wolf 2021, eqs. (5)-(6), written as loops --------


def chefer_numpy(weights, grads) -> np.ndarray:
    layers, heads, t, _ = weights.shape
    r = np.eye(t)
    for l in range(layers):
        a_bar = np.zeros((t, t))
        for h in range(heads):
            for i in range(t):
                for j in range(t):
                    a_bar[i, j] += max(grads[l, h, i, j] * weights[l, h, i, j], 0.0) / heads
        r = r + a_bar @ r
    return r


def test_gradient_rollout_matches_the_equations_in_numpy():
    rng = np.random.default_rng(1)
    a = rng.random((3, 4, 6, 6))
    a /= a.sum(-1, keepdims=True)
    g = rng.normal(size=(3, 4, 6, 6))
    ours = gradient_rollout(list(torch.from_numpy(a)), list(torch.from_numpy(g)))
    np.testing.assert_allclose(ours, chefer_numpy(a, g), rtol=1e-12, atol=1e-12)
    one = gradient_rollout([torch.from_numpy(a[0])], [torch.from_numpy(g[0])])
    np.testing.assert_allclose(one, np.eye(6) + np.clip(a[0] * g[0], 0, None).mean(0))


def test_gradient_rollout_is_the_identity_without_positive_contributions():
    a = [torch.rand(2, 5, 5).softmax(-1) for _ in range(3)]
    np.testing.assert_array_equal(gradient_rollout(a, [torch.zeros(2, 5, 5)] * 3), np.eye(5))
    np.testing.assert_array_equal(gradient_rollout(a, [-torch.ones(2, 5, 5)] * 3), np.eye(5))
    with pytest.raises(ValueError, match="same shape"):
        gradient_rollout(a, [torch.zeros(2, 5, 4)] * 3)


# ---- attnkit's own models: the weights recorded with need_weights are in the graph ----------


def tiny_bert(cls, seed=0, **extra):
    transformers = pytest.importorskip("transformers", reason="needs `transformers`")
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16, initializer_range=0.5, **extra,
    )  # fmt: skip
    return getattr(transformers, cls)(config).eval().double()


def test_attnkit_bert_encoder_gives_the_hugging_face_gradients():
    from attnkit.hf.attribute import hf_attribute
    from attnkit.modules.bert import BertConfig, BertEncoder, load_hf_bert_weights

    hf = tiny_bert("BertModel")
    ours = BertEncoder(BertConfig.from_hf_config_dict(hf.config.to_dict())).double().eval()
    load_hf_bert_weights(ours, hf.state_dict())
    ids = torch.randint(3, 40, (1, 7), generator=torch.Generator().manual_seed(0))
    v = torch.randn(16, dtype=torch.float64)
    theirs = hf_attribute(hf, {"input_ids": ids}, lambda out: out.last_hidden_state[0, 0] @ v)
    out = ours(ids, torch.ones_like(ids), need_weights=True)
    mine = attribute(out, out.last_hidden[0, 0] @ v)
    assert mine.score == pytest.approx(theirs.score, abs=1e-10)
    for a, b in zip(mine.grads + mine.weights, theirs.grads + theirs.weights, strict=True):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-8)
    assert theirs.grads[-1].abs().max() > 1e-3  # not vacuous


def test_an_attnkit_classifier_output_is_attributed_through_the_core():
    from attnkit.apps.classification.nets import TransformerClassifier

    model = TransformerClassifier(30, 3, d_model=16, num_heads=2, d_ff=32).double().eval()
    ids = torch.randint(4, 30, (1, 6))
    out = model(ids, torch.ones_like(ids, dtype=torch.bool))
    result = attribute(out, out.logits[0, 2])
    assert [w.shape for w in result.weights] == [(2, 7, 7)] * 2  # <cls> + 6 words
    assert result.grads[-1][:, 1:].abs().max() == 0  # the head reads <cls> only
    assert result.grads[-1][:, 0].abs().max() > 0
    assert set(result.importances(0)) == {
        "attention", "rollout", "attention x gradient", "gradient rollout",
    }  # fmt: skip


# ---- Hugging Face: the whole path against finite differences -------------------------------


def perturbed_eager(delta):
    """Eager BERT attention with ``delta[layer]`` ``(1, H, T, T)`` added after the softmax."""

    def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **_):
        scores = query @ key.transpose(2, 3) * scaling  # (B, H, T, T)
        weights = (scores if attention_mask is None else scores + attention_mask).softmax(-1)
        weights = weights if delta is None else weights + delta[module.layer_idx]
        return (weights @ value).transpose(1, 2).contiguous(), weights  # (B, T, H, Dh)

    return attention


def test_hf_classifier_gradients_match_finite_differences(monkeypatch):
    from transformers.models.bert import modeling_bert

    from attnkit.hf.attribute import hf_attribute

    model = tiny_bert("BertForSequenceClassification", num_labels=3)
    inputs = {"input_ids": torch.randint(3, 40, (1, 6), generator=torch.Generator().manual_seed(2))}
    result = hf_attribute(model, inputs, 1)
    assert model.config._attn_implementation == "sdpa"  # restored after the eager run

    def logit(delta):
        monkeypatch.setattr(modeling_bert, "eager_attention_forward", perturbed_eager(delta))
        model.set_attn_implementation("eager")
        return model(**inputs).logits[0, 1]

    assert float(logit(None).detach()) == pytest.approx(result.score, abs=1e-12)  # the same forward
    for index in [(0, 0, 3, 2), (0, 1, 5, 0), (1, 0, 0, 4), (1, 1, 0, 1), (1, 1, 2, 2)]:
        fd = finite_difference(logit, (2, 1, 2, 6, 6), (index[0], 0, *index[1:]))
        assert result.grads[index[0]][index[1:]].item() == pytest.approx(fd, abs=1e-6, rel=1e-4)
    assert result.grads[1][:, 0].abs().max() > 1e-3


def test_hf_causal_lm_target_reads_its_position():
    from attnkit.hf.attribute import hf_attribute

    transformers = pytest.importorskip("transformers", reason="needs `transformers`")
    config = transformers.GPT2Config(vocab_size=30, n_positions=16, n_embd=16, n_layer=2, n_head=2)
    model = transformers.GPT2LMHeadModel(config).double().requires_grad_(False)  # frozen
    ids = torch.randint(0, 30, (1, 8), generator=torch.Generator().manual_seed(3))
    result = hf_attribute(model, {"input_ids": ids}, (4, 7))
    assert model.training  # its mode is restored, and it ran in eval mode (no dropout):
    again = hf_attribute(model, {"input_ids": ids}, (4, 7))
    assert all(torch.equal(a, b) for a, b in zip(result.grads, again.grads, strict=True))
    last = result.grads[-1]
    assert last[:, 5:].abs().max() == 0 and last[:, :4].abs().max() == 0  # only row 4 counts
    assert torch.triu(result.weights[0], diagonal=1).abs().max() == 0  # causal
    relevance = result.importances(query=4)["gradient rollout"]
    assert relevance[5:].max() == 0 and relevance[4] >= 1.0  # no later token; R = I + ...
