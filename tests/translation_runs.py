"""Tiny translation experiments shared by tests in several folders (a pytest plugin that
tests/conftest.py loads): the engine's tests (tests/engine: loop, resume, kill/resume, faults,
distributed, precision), the generic run commands (tests/cli) and the translation app's own
(tests/apps/translation) train a few hundred generated pairs with a small GRU; the alignment
tests (tests/apps/translation, tests/benchmarks) share one tiny run trained for AER."""

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
        name="tiny",
        data=DataConfig(generated_sizes=(300, 20, 20), vocab_size=200, max_len=120),
        model=ModelConfig(embed_dim=16, hidden_dim=32, dropout=0.1, **model),
        train=TrainConfig(
            epochs=2, max_tokens=1500, learning_rate=0.01, schedule="constant", average_last=2
        ),
        decode=DecodeConfig(beam_size=2, max_len_ratio=1.2, max_len_offset=5),
    )


@pytest.fixture(name="tiny_config")
def _tiny_config_fixture():
    """The factory :func:`tiny_config`, for tests that vary it."""
    return tiny_config


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
    """One trained tiny run shared by the tests that only read it."""
    from attnkit.apps.translation.training import train

    run_dir = tmp_path_factory.mktemp("runs") / "tiny"
    result = train(tiny_config(), run_dir, progress=False)
    return run_dir, result


def make_fast_config(**train) -> TranslationConfig:
    """Smaller than :func:`tiny_config` for the distributed and fault tests: short pairs only
    (about 120 of 300), 400-token batches (8 updates per epoch), one thread, loss-only
    validation, deterministic kernels."""
    cfg = tiny_config()
    settings = dict(epochs=2, max_tokens=400, learning_rate=0.01, schedule="constant")
    settings.update(average_last=2, threads=1, valid_bleu=False, deterministic=True)
    settings.update(train)
    return TranslationConfig(
        name="fast",
        data=DataConfig(generated_sizes=(300, 12, 12), vocab_size=300, max_len=36),
        model=cfg.model,
        train=TrainConfig(**settings),
        decode=cfg.decode,
    )


@pytest.fixture(name="fast_config", scope="session")
def _fast_config_fixture():
    """The factory :func:`make_fast_config`."""
    return make_fast_config


def tiny_aer_config(**model) -> TranslationConfig:
    """The alignment tests' run: one epoch on (200, 20, 20) pairs, greedy decoding."""
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
    from attnkit.apps.translation.decode.run import load_run
    from attnkit.apps.translation.training import train

    run_dir = tmp_path_factory.mktemp("aer-runs") / "tiny"
    train(tiny_aer_config(), run_dir, progress=False)
    cfg, tokenizer, model = load_run(run_dir)
    return SimpleNamespace(dir=run_dir, cfg=cfg, tokenizer=tokenizer, model=model)


@pytest.fixture(scope="session")
def make_tiny_config():
    """The tiny alignment run's config maker, for tests that change a field."""
    return tiny_aer_config
