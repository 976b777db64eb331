"""Shared fixtures of the evaluation tests: a tiny translation run trained once per session."""

from types import SimpleNamespace

import pytest

from attnkit.apps.translation.config import (
    DataConfig,
    DecodeConfig,
    ModelConfig,
    TrainConfig,
    TranslationConfig,
)


def tiny_config(**model) -> TranslationConfig:
    return TranslationConfig(
        name="tiny-aer",
        data=DataConfig(generated_sizes=(200, 20, 20), vocab_size=200, max_len=120),
        model=ModelConfig(embed_dim=16, hidden_dim=32, dropout=0.1, **model),
        train=TrainConfig(epochs=1, max_tokens=1500, learning_rate=0.01, schedule="constant"),
        decode=DecodeConfig(beam_size=1, max_len_ratio=1.2, max_len_offset=5),
    )


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """A tiny Bahdanau GRU trained for one epoch on the generated corpus (~15 s)."""
    from attnkit.apps.translation.run import load_run
    from attnkit.apps.translation.training import train

    run_dir = tmp_path_factory.mktemp("aer-runs") / "tiny"
    train(tiny_config(), run_dir, progress=False)
    cfg, tokenizer, model = load_run(run_dir)
    return SimpleNamespace(dir=run_dir, cfg=cfg, tokenizer=tokenizer, model=model)


@pytest.fixture(scope="session")
def make_tiny_config():
    """The tiny run's config maker, for tests that change a field."""
    return tiny_config
