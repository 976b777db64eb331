"""attnkit's GPT with a Hugging Face GPT-2's weights gives GPT-2's logits (to 1e-5 in fp32)
and the same greedy generation as ``GPT2LMHeadModel.generate`` (issue 37's reference: a peer
library's model, weights copied)."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from attnkit.apps.gpt.generate import Sampling, generate  # noqa: E402
from attnkit.apps.gpt.hf_gpt2 import load_gpt2  # noqa: E402
from attnkit.errors import DataError  # noqa: E402


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=97, n_positions=48, n_embd=32, n_layer=3, n_head=4, attn_implementation="eager"
    )
    hf = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # biases and LayerNorms away from their init, so a swap shows
        for p in hf.parameters():
            p.add_(0.05 * torch.randn_like(p))
    folder = tmp_path_factory.mktemp("gpt2")
    hf.save_pretrained(folder, safe_serialization=True)
    return hf, folder


def test_logits_equal_gpt2s(gpt2):
    hf, folder = gpt2
    ours = load_gpt2(folder)
    ids = torch.randint(0, 97, (3, 40), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = hf(ids).logits
        got = ours(ids).logits
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_attention_weights_equal_gpt2s(gpt2):
    hf, folder = gpt2
    ids = torch.randint(0, 97, (2, 20), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        expected = hf(ids, output_attentions=True).attentions
        got = load_gpt2(folder)(ids, need_weights=True).weights
    assert len(got) == len(expected) == 3
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=1e-6, rtol=1e-5)


def test_greedy_generation_equals_gpt2_generate(gpt2):
    hf, folder = gpt2
    prompt = torch.tensor([[5, 17, 3, 88]])
    with torch.no_grad():
        expected = hf.generate(
            prompt, max_new_tokens=30, do_sample=False, pad_token_id=0, use_cache=True
        )
    for cache in (True, False):
        got = generate(load_gpt2(folder), prompt, 30, Sampling(temperature=0), use_cache=cache)
        assert torch.equal(got, expected)


def test_a_folder_without_gpt2_is_named(tmp_path):
    with pytest.raises(DataError, match="config.json"):
        load_gpt2(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(DataError, match="not 'gpt2'"):
        load_gpt2(tmp_path)
