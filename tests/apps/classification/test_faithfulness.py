"""Faithfulness measures against their definitions: TVD, Kendall tau, gradient x input as a
directional derivative, leave-one-out by erasure, permutation of uniform weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.apps.classification.classifier import TextClassifier
from attnkit.apps.classification.config import TextClassificationConfig
from attnkit.apps.classification.data import WordVocab
from attnkit.apps.classification.faithfulness import (
    attention_and_importance,
    erasure_flip_rates,
    mean_kendall_tau,
    permutation_tvd,
    tvd,
)
from attnkit.apps.classification.nets import RNNAttentionClassifier
from attnkit.apps.classification.tokens import WordTokenizer


def test_tvd_and_kendall_tau_definitions():
    np.testing.assert_allclose(tvd([0.2, 0.8], [0.5, 0.5]), 0.3)
    np.testing.assert_allclose(tvd(np.eye(2), np.eye(2)[::-1]), [1.0, 1.0])
    a = np.array([0.1, 0.5, 0.2, 0.7, 0.3, 0.9, 0.4, 0.6])
    tau, share, n = mean_kendall_tau([(a, 2 * a + 1), (a, -a), (np.ones(1), np.ones(1))])
    assert n == 2 and tau == pytest.approx(0.0) and share == pytest.approx(0.5)


@pytest.fixture
def classifier():
    torch.manual_seed(1)
    vocab = WordVocab.build(["the film was great", "the plot was dull and long"])
    cfg = TextClassificationConfig()
    model = RNNAttentionClassifier(len(vocab), 2, embed_dim=8, hidden_dim=8, attention_dim=8)
    return TextClassifier(cfg, WordTokenizer(vocab), model)


def test_gradient_importance_is_a_directional_derivative(classifier):
    item = classifier.encode(["the film was great and long"])[0]
    result = attention_and_importance(classifier, item)
    target = int(result["probs"].argmax())
    eps = 1e-3
    for t in range(len(item.ids)):

        def scale(_m, _i, out, t=t):
            out = out.clone()
            out[0, t] *= 1 + eps  # e_t -> e_t + eps * e_t
            return out

        handle = classifier.model.input_embedding.register_forward_hook(scale)
        with torch.no_grad():
            bumped = torch.softmax(classifier.run([item]).logits.double(), -1)[0, target]
        handle.remove()
        numeric = abs(float(bumped) - result["probs"][target]) / eps
        assert result["gradient"][t] == pytest.approx(numeric, rel=0.05, abs=1e-5)


def test_leave_one_out_is_tvd_after_erasing_each_token(classifier):
    item = classifier.encode(["the plot was great"])[0]
    result = attention_and_importance(classifier, item)
    for t in range(4):
        erased = classifier.probabilities([item.without(t)])[0]
        assert result["loo"][t] == pytest.approx(float(tvd(result["probs"], erased)), abs=1e-6)
    np.testing.assert_allclose(result["attention"].sum(), 1.0, rtol=1e-5)


def test_permuting_uniform_attention_changes_nothing(classifier):
    pool = classifier.model.pool
    with torch.no_grad():
        pool.proj.weight.zero_()  # u_t = tanh(b) for every token: uniform weights
    items = classifier.encode(["the film was great", "the plot was dull and long"])
    assert np.allclose(permutation_tvd(classifier, items, n_perm=5), 0.0, atol=1e-6)
    top, rand, n = erasure_flip_rates(classifier, items)
    assert n == 2 and 0.0 <= top <= 1.0 and 0.0 <= rand <= 1.0


def test_table_for_a_transformer_marks_permutation_not_applicable():
    from attnkit.apps.classification.faithfulness import faithfulness_table
    from attnkit.apps.classification.nets import TransformerClassifier
    from attnkit.apps.classification.rationales import generate_rationales
    from attnkit.apps.classification.token_weights import TfidfBaseline

    train, test = generate_rationales("train", 60), generate_rationales("test", 6)
    vocab = WordVocab.build([e.text for e in train])
    model = TransformerClassifier(len(vocab), 2, d_model=16, num_heads=2, d_ff=16, num_layers=1)
    clf = TextClassifier(TextClassificationConfig(), WordTokenizer(vocab), model)
    baseline = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
    rows = {r.measure: r for r in faithfulness_table(clf, test, baseline=baseline, n_perm=3)}
    assert rows["permutation: output TVD"].value is None
    uniform = np.mean([len(e.rationale) / len(e.text.split()) for e in test])
    assert rows["rationale mass: uniform"].value == pytest.approx(uniform)
    assert -1 <= rows["Kendall tau: attention vs leave-one-out"].value <= 1
