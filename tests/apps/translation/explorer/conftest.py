"""Fixtures of the explorer tests: two tiny trained runs (a GRU with Bahdanau attention and a
two-layer, two-head Transformer) and explorer servers on 127.0.0.1, each in a thread.

The runs are the training tests' tiny experiment (``tests/translation_runs.py``), cut to one epoch
on 200 generated pairs: a few seconds each. Their translations are poor; the tests check the
plumbing, not the quality.
"""

import pytest
from explorer_helpers import Client, start, stop, tiny_config


def _train(tmp_path_factory, name: str, **model):
    from attnkit.apps.translation.training import train

    run_dir = tmp_path_factory.mktemp("explorer-runs") / name
    train(tiny_config(**model), run_dir, progress=False)
    return run_dir


@pytest.fixture(scope="session")
def rnn_run(tmp_path_factory):
    """A trained tiny GRU encoder-decoder with Bahdanau attention (one head, ``"cross"``)."""
    return _train(tmp_path_factory, "rnn")


@pytest.fixture(scope="session")
def transformer_run(tmp_path_factory):
    """A trained tiny Transformer: 2 layers, 2 heads, self- and cross-attention per layer."""
    model = dict(arch="transformer", d_model=16, num_heads=2, d_ff=32)
    return _train(tmp_path_factory, "transformer", encoder_layers=2, decoder_layers=2, **model)


@pytest.fixture(scope="session")
def rnn_server(rnn_run):
    server, thread = start(rnn_run, max_chars=120)
    yield server
    stop(server, thread)


@pytest.fixture(scope="session")
def transformer_server(transformer_run):
    server, thread = start(transformer_run)
    yield server
    stop(server, thread)


@pytest.fixture(scope="session")
def demo_server():
    server, thread = start(None)
    yield server
    stop(server, thread)


@pytest.fixture
def rnn_client(rnn_server):
    return Client(rnn_server)


@pytest.fixture
def transformer_client(transformer_server):
    return Client(transformer_server)


@pytest.fixture
def demo_client(demo_server):
    return Client(demo_server)
