"""The text-classification config: the engine's train section with this task's defaults, and
values out of range refused at load time with the file, the line of the field and its name."""

from __future__ import annotations

import pytest

from attnkit.apps.classification.config import (
    ClassifierTrainConfig,
    TextClassificationConfig,
    load_classifier_config,
)
from attnkit.config import ConfigError
from attnkit.engine.settings import TrainSettings

HEAD = "name: x\ntask: text-classification\n"


def _write(tmp_path, body: str):
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    return path


def test_train_section_is_the_engines_with_classifier_defaults():
    t = TextClassificationConfig().train
    assert isinstance(t, ClassifierTrainConfig) and isinstance(t, TrainSettings)
    # as the loop before the engine: AdamW with PyTorch's betas, constant rate, seed 0
    assert (t.optimiser, t.betas, t.schedule, t.seed) == ("adamw", (0.9, 0.999), "constant", 0)
    assert (t.batch_size, t.epochs, t.warmup_fraction) == (64, 3, 0.1)


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("model:\n  kind: rnn\n  dropout: 1.0\n", 5, r"dropout must be in \[0, 1\), got 1.0"),
        ("model:\n  hidden_dim: 0\n", 4, "hidden_dim must be at least 1, got 0"),
        ("model:\n  kind: transformer\n  embed_dim: 30\n  num_heads: 4\n", 5,
         "embed_dim 30 must be divisible by num_heads 4"),
        ("data:\n  source: rationales\n  max_len: 0\n", 5, "max_len must be at least 1"),
        ("data:\n  generated_sizes: [10, 5]\n", 4, "generated_sizes must list 3 sizes"),
        ("data:\n  source: tsv\n", 4, "source 'tsv' needs train_file"),
        ("train:\n  batch_size: 0\n", 4, "batch_size must be at least 1, got 0"),
        ("train:\n  epochs: 2\n  learning_rate: -1.0\n", 5, "learning_rate must be finite"),
        ("train:\n  warmup_ratio: 0.1\n", 4, "unknown key 'warmup_ratio' in section 'train'"),
        ("train:\n  devices: cpu\n", 4, "unknown key 'devices' in section 'train'"),
        ("num_classes: 1\n", 3, "num_classes must be at least 2, got 1"),
    ],
)  # fmt: skip
def test_bad_values_name_file_line_and_field(tmp_path, body, line, message):
    path = _write(tmp_path, body)
    with pytest.raises(ConfigError, match=message) as err:
        load_classifier_config(path)
    where = f"c.yaml, line {line}:" if line else "c.yaml"
    assert where in str(err.value)


def test_shipped_style_config_loads(tmp_path):
    body = "train:\n  schedule: linear\n  warmup_fraction: 0.06\n  checkpoint_every: 100\n"
    t = load_classifier_config(_write(tmp_path, body)).train
    assert (t.schedule, t.warmup_fraction, t.checkpoint_every) == ("linear", 0.06, 100)
