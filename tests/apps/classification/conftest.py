"""Shared fixtures for the text-classification tests: one tiny trained run on generated data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

CONFIG = """\
name: tiny-rationales
task: text-classification
data:
  source: rationales
  generated_sizes: [800, 120, 120]
  seed: 3
  max_len: 40
model:
  kind: {kind}
  embed_dim: 32
  hidden_dim: 32
  attention_dim: 32
  num_heads: 2
  d_ff: 64
  num_layers: 1
  dropout: 0.1
train:
  epochs: {epochs}
  batch_size: 32
  learning_rate: {lr}
evaluate:
  tfidf_baseline: true
"""


def write_config(tmp: Path, kind: str = "rnn", epochs: int = 4, lr: float = 0.005) -> Path:
    path = tmp / f"tiny-{kind}.yaml"
    path.write_text(CONFIG.format(kind=kind, epochs=epochs, lr=lr), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _one_thread():
    """These models are tiny: one thread is as fast, and never spin-waits on a busy CPU."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(name="write_config")
def _write_config_fixture():
    """The factory :func:`write_config`, for tests that vary the model."""
    return write_config


@pytest.fixture(scope="session")
def rnn_run(tmp_path_factory) -> Path:
    """A BiGRU + attention trained on 800 generated sentences (a few seconds)."""
    from attnkit.apps.classification.app import APP

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    tmp = tmp_path_factory.mktemp("classify")
    run_dir = tmp / "run"
    APP.train(APP.load_config(write_config(tmp)), run_dir, resume=False, progress=False)
    torch.set_num_threads(before)
    return run_dir


_DEFAULT = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    path = Path(os.environ.get("ATTNKIT_DATA_DIR") or _DEFAULT).resolve()
    if not (path / "sst2" / "dev.tsv").is_file():
        pytest.skip(f"SST-2 not found under {path} (set ATTNKIT_DATA_DIR to the data folder)")
    return path
