"""Tiny random Hugging Face models built from configs (no download), and offline tokenizers."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="needs transformers (test extra)")


def _tiny(model_cls, config):
    torch.manual_seed(0)
    return model_cls(config).eval()


@pytest.fixture
def bert():
    config = transformers.BertConfig(
        vocab_size=60,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    return _tiny(transformers.BertModel, config)


@pytest.fixture
def gpt2():
    config = transformers.GPT2Config(
        vocab_size=60,
        n_embd=16,
        n_layer=2,
        n_head=2,
        n_positions=64,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    return _tiny(transformers.GPT2LMHeadModel, config)


@pytest.fixture
def marian():
    config = transformers.MarianConfig(
        vocab_size=60,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=0,
        forced_eos_token_id=None,
    )
    return _tiny(transformers.MarianMTModel, config)
