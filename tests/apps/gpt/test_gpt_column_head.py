"""Generation's output layer in the ``(D, V)`` layout (:class:`ColumnHead`, faster to read for
one token on the CPU): the same logits as the model's ``nn.Linear``, the same greedy tokens,
and the model's own (tied) head and training mode back afterwards."""

import torch

import attnkit.apps.gpt.generate as gen
from attnkit.apps.gpt.config import GPTModelConfig
from attnkit.apps.gpt.generate import ColumnHead, Sampling, generate
from attnkit.apps.gpt.model import GPT


def _model(**options) -> GPT:
    torch.manual_seed(0)
    return GPT(GPTModelConfig(layers=2, heads=2, width=16, **options), 29, 32)


def test_column_head_gives_the_linear_layers_logits():
    head = torch.nn.Linear(16, 29)
    x = torch.randn(3, 5, 16)
    with torch.no_grad():
        torch.testing.assert_close(ColumnHead(head)(x), head(x), atol=1e-6, rtol=1e-5)
        head.bias = None
        torch.testing.assert_close(ColumnHead(head)(x), head(x), atol=1e-6, rtol=1e-5)


def test_generation_gives_the_same_tokens_and_restores_the_head(monkeypatch):
    model = _model(positions="rope").train()
    head = model.head
    prompt = torch.randint(0, 29, (2, 4), generator=torch.Generator().manual_seed(1))
    fast = generate(model, prompt, 40, Sampling(temperature=0))
    assert model.head is head and model.head.weight is model.tokens.weight  # still tied
    assert model.training
    monkeypatch.setattr(gen, "_column_head", lambda model: False)
    assert torch.equal(fast, generate(model, prompt, 40, Sampling(temperature=0)))
