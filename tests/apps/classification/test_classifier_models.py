"""The classifiers: Yang et al. (2016) pooling against NumPy, padding invariance, weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.apps.classification.nets import (
    AttentionPooling,
    RNNAttentionClassifier,
    TransformerClassifier,
)
from attnkit.apps.classification.tokens import Encoded, pad_batch


def test_attention_pooling_is_yang_et_al_word_attention():
    pool = AttentionPooling(6, 4)
    h = torch.randn(2, 5, 6)
    keep = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    summary, weights = pool(h, keep)
    W, b = pool.proj.weight.detach().numpy(), pool.proj.bias.detach().numpy()
    u_w = pool.context.detach().numpy()
    for row in range(2):
        n = int(keep[row].sum())
        hn = h[row, :n].numpy()
        u = np.tanh(hn @ W.T + b)  # eq. (5)
        e = u @ u_w
        a = np.exp(e - e.max()) / np.exp(e - e.max()).sum()  # eq. (6)
        np.testing.assert_allclose(weights[row, :n].detach().numpy(), a, atol=1e-6)
        np.testing.assert_allclose(summary[row].detach().numpy(), a @ hn, atol=1e-5)  # eq. (7)
        assert torch.all(weights[row, n:] == 0)


def _models():
    torch.manual_seed(0)
    rnn = RNNAttentionClassifier(50, 3, embed_dim=8, hidden_dim=8, attention_dim=8, cell="lstm")
    tf = TransformerClassifier(50, 3, d_model=16, num_heads=2, d_ff=32, num_layers=2, max_len=20)
    return [rnn.eval(), tf.eval()]


@pytest.mark.parametrize("index", [0, 1], ids=["bilstm", "transformer"])
def test_padding_changes_nothing_and_weights_are_distributions(index):
    model = _models()[index]
    short = Encoded([5, 6, 7], ["a", "b", "c"], [0, 1, 2])
    long = Encoded(list(range(3, 12)), ["x"] * 9, list(range(9)))
    alone = model(*pad_batch([short], 0))
    batched = model(*pad_batch([short, long], 0))
    torch.testing.assert_close(batched.logits[0], alone.logits[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(
        batched.token_weights[0, :3], alone.token_weights[0], atol=1e-5, rtol=1e-5
    )
    assert torch.all(batched.token_weights[0, 3:] == 0)
    torch.testing.assert_close(batched.token_weights.sum(1), torch.ones(2))


def test_transformer_token_weights_are_the_class_token_row():
    model = _models()[1]
    out = model(*pad_batch([Encoded([4, 9, 8, 7], list("abcd"), [0, 1, 2, 3])], 0))
    row = out.attentions[-1][0, :, 0, 1:].mean(0)  # last layer, class-token query, over heads
    torch.testing.assert_close(out.token_weights[0], row / row.sum())


def test_rnn_predict_from_its_own_weights_equals_forward():
    model = _models()[0]
    ids, keep = pad_batch([Encoded([4, 5], ["a", "b"], [0, 1]), Encoded([7], ["c"], [0])], 0)
    out = model(ids, keep)
    h = model.encode(ids, keep)
    torch.testing.assert_close(model.predict_from(h, out.token_weights), out.logits)
