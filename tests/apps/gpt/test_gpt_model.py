"""The GPT model: causal (a later token changes no earlier logit), its attention weights rows
of a causal distribution, step-by-step generation with the KV cache equal to recomputing the
whole context for every position scheme, grouped-query and sliding-window attention, and
nanoGPT's parameter count for its CPU recipe."""

import pytest
import torch

from attnkit.apps.gpt.config import GPTModelConfig
from attnkit.apps.gpt.generate import Sampling, generate
from attnkit.apps.gpt.model import GPT

SCHEMES = [
    dict(positions="learned"),
    dict(positions="rope"),
    dict(positions="alibi"),
    dict(positions="none"),
    dict(positions="learned", kv_heads=1),
    dict(positions="rope", kv_heads=2),
    dict(positions="rope", window=8),
    dict(positions="alibi", window=8, kv_heads=2),
    dict(positions="learned", mlp=False),
]


def _model(block=32, **options) -> GPT:
    torch.manual_seed(0)
    cfg = GPTModelConfig(layers=2, heads=4, width=32, **options)
    return GPT(cfg, 23, block).eval()


@pytest.mark.parametrize("options", SCHEMES, ids=lambda o: "-".join(map(str, o.values())))
def test_a_later_token_changes_no_earlier_logit(options):
    model = _model(**options)
    ids = torch.randint(0, 23, (2, 20), generator=torch.Generator().manual_seed(1))
    changed = ids.clone()
    changed[:, 12] = (changed[:, 12] + 1) % 23
    with torch.no_grad():
        a, b = model(ids).logits, model(changed).logits
    torch.testing.assert_close(a[:, :12], b[:, :12], rtol=0, atol=0)
    assert not torch.allclose(a[:, 12:], b[:, 12:])


@pytest.mark.parametrize("options", SCHEMES, ids=lambda o: "-".join(map(str, o.values())))
def test_cached_generation_equals_recomputation(options):
    model = _model(**options)
    prompt = torch.randint(0, 23, (3, 5), generator=torch.Generator().manual_seed(2))
    length = 20 if options["positions"] == "learned" else 45  # past the context of 32
    for how, seed in ((Sampling(temperature=0), None), (Sampling(0.9, top_k=5), 7)):
        cached = generate(model, prompt, length, how, seed=seed, use_cache=True)
        recomputed = generate(model, prompt, length, how, seed=seed, use_cache=False)
        assert torch.equal(cached, recomputed)


def test_learned_positions_past_the_context_recompute_the_last_block():
    model = _model(block=16)
    out = generate(model, torch.tensor([[1, 2, 3]]), 40, Sampling(temperature=0))
    assert out.shape == (1, 43)
    with torch.no_grad():  # the last token: the argmax after the last 16 tokens before it
        last = model(out[:, -17:-1]).logits[0, -1].argmax()
    assert int(out[0, -1]) == int(last)


def test_weights_are_causal_distributions_per_layer_and_head():
    model = _model(kv_heads=2)
    with torch.no_grad():
        weights = model(torch.randint(0, 23, (2, 10)), need_weights=True).weights
    assert len(weights) == 2
    for w in weights:
        assert w.shape == (2, 4, 10, 10)
        torch.testing.assert_close(w.sum(-1), torch.ones(2, 4, 10))
        assert float(w.triu(1).abs().max()) == 0.0


def test_window_weights_see_only_the_window():
    model = _model(positions="rope", window=4)
    with torch.no_grad():
        w = model(torch.randint(0, 23, (1, 12)), need_weights=True).weights[0][0, 0]  # (T, T)
    rows, cols = torch.meshgrid(torch.arange(12), torch.arange(12), indexing="ij")
    assert float(w[(rows - cols >= 4) | (cols > rows)].abs().max()) == 0.0


def test_parameter_count_is_nanogpts():
    """nanoGPT's default Shakespeare model (65 characters, 6 layers, 6 heads, 384 wide,
    context 256, no biases) logs "num decayed parameter tensors: 26, with 10,740,096
    parameters" and "num non-decayed parameter tensors: 13, with 4,992 parameters"
    (benchmarks/results/gpt-shakespeare-h100.log): 10,745,088 with the position table."""
    model = GPT(GPTModelConfig(layers=6, heads=6, width=384, bias=False), 65, 256)
    assert sum(p.numel() for p in model.parameters()) == 10_740_096 + 4_992
    assert model.parameter_count() == 10_745_088 - 256 * 384  # nanoGPT's "10.65M"


def test_bad_kv_heads_and_width_are_refused_at_the_config():
    with pytest.raises(ValueError, match="kv_heads 3 must divide heads 4"):
        GPTModelConfig(heads=4, kv_heads=3).check()
    with pytest.raises(ValueError, match="divisible by heads"):
        GPTModelConfig(width=130, heads=4).check()
