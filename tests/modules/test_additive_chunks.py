"""The additive (Bahdanau) score in inference is computed a chunk of rows at a time: the same
numbers as in one piece (up to the last bit of the final matrix-vector product, whose kernel
may round differently for fewer rows), and never chunked under autograd."""

from __future__ import annotations

import pytest
import torch

from attnkit.attention import AdditiveAttention, scores


@pytest.mark.parametrize("chunk_bytes", [1, 3000, 50_000, 10**9])
def test_chunked_additive_score_equals_one_piece(monkeypatch, chunk_bytes):
    torch.manual_seed(0)
    layer = AdditiveAttention(16, 12, 24).eval()
    query, key = torch.randn(37, 1, 16), torch.randn(37, 9, 12)  # beam rows, one step
    mask = torch.rand(37, 1, 9) > 0.2
    with torch.no_grad():
        whole = layer(query, key, mask=mask, prepared_key=layer.prepare_key(key))
        monkeypatch.setattr(scores, "CHUNK_BYTES", chunk_bytes)
        calls = []
        hidden = layer.score._hidden_to_score
        monkeypatch.setattr(
            layer.score, "_hidden_to_score", lambda q, k: calls.append(1) or hidden(q, k)
        )
        chunked = layer(query, key, mask=mask, prepared_key=layer.prepare_key(key))
    torch.testing.assert_close(chunked.context, whole.context, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(chunked.weights, whole.weights, atol=1e-6, rtol=1e-6)
    assert (len(calls) > 1) == (chunk_bytes < 37 * 9 * 24 * 4)


def test_not_chunked_under_autograd(monkeypatch):
    monkeypatch.setattr(scores, "CHUNK_BYTES", 1)
    layer = AdditiveAttention(8, 8, 8)
    query, key = torch.randn(5, 1, 8, requires_grad=True), torch.randn(5, 4, 8)
    q = layer.score.prepare_query(query).unsqueeze(-2)
    assert scores._chunk_rows(q, layer.prepare_key(key).unsqueeze(-3)) is None
    layer(query, key).context.sum().backward()
    assert query.grad is not None
