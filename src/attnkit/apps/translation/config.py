"""The configuration of a translation experiment: four typed sections, loaded from YAML.

Every field has a default and a comment; :func:`load_experiment` rejects unknown keys and bad
values with the file, line and section (see :mod:`attnkit.config`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from attnkit.apps.translation.models.recurrent import RNN_ATTENTION
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import TrainSettings

# the attention names of the recurrent models, one list for the models and the config
Attention = Literal[RNN_ATTENTION]  # type: ignore[valid-type]


@dataclass
class DataConfig(Checked):
    """Which parallel text, and how it is cut into subwords."""

    corpus: str = "default"  # default (generated) | multi30k | tatoeba-eng-deu | files
    src_lang: str = "en"
    tgt_lang: str = "de"
    data_dir: str | None = None  # where named corpora live; else $ATTNKIT_DATA_DIR
    train: str | None = None  # corpus "files": path prefixes, read as PREFIX.{src,tgt}_lang
    valid: str | None = None
    test: str | None = None
    generated_sizes: tuple[int, int, int] = (20000, 500, 500)  # default corpus train/valid/test
    generated_seed: int = 1
    # pairs longer than this (subwords, either side) are dropped and counted
    max_len: int = bounded(100, ge=1)
    vocab_size: int = bounded(4000, ge=1)
    tokenizer: Literal["bpe", "unigram"] = "bpe"
    joint_vocab: bool = True  # one sentencepiece model for both languages
    # [low, high]: training pairs joined into examples of low-high consecutive sentences, of an
    # order shuffled by concat_seed (data/concat.py; validation and test unchanged); null = off
    concat: tuple[int, int] | None = bounded(None, ge=1)
    concat_seed: int = 0

    def check(self) -> None:
        if self.concat is not None and self.concat[0] > self.concat[1]:
            raise ValueError(
                f"concat {list(self.concat)} must be [low, high] with low <= high, e.g. [2, 4]"
            )


@dataclass
class ModelConfig(Checked):
    """The architecture. ``arch`` picks the family; the other fields of that family apply."""

    arch: Literal["rnn", "transformer"] = "rnn"
    dropout: float = bounded(0.2, ge=0, lt=1)
    tie_embeddings: bool = False  # target embedding = output projection
    # recurrent encoder-decoder
    cell: Literal["gru", "lstm"] = "gru"
    attention: Attention = "bahdanau"
    embed_dim: int = 256
    hidden_dim: int = 512  # decoder width; a bidirectional encoder gives hidden_dim/2 per side
    encoder_layers: int = 1
    decoder_layers: int = 1
    bidirectional: bool = True
    input_feeding: bool = True  # Luong et al. 2015 §3.3
    bridge: bool = True  # initialise the decoder from the encoder's final states
    local_window: int = 10  # D of local-m / local-p (Luong et al. 2015 §3.2)
    max_source_len: int = 256  # rows of W_a for location attention
    # Transformer
    d_model: int = 256
    num_heads: int = 4
    d_ff: int = 1024
    norm_first: bool = False  # pre-LN instead of the paper's post-LN
    # where word order comes from: absolute sinusoids (the paper) or a relative scheme
    positions: Literal["absolute", "shaw", "t5", "alibi", "rope", "none"] = "absolute"
    # shaw: offsets clipped to +-k (Shaw et al. 2018: 16)
    max_relative_distance: int = bounded(16, ge=1)
    relative_values: bool = False  # shaw: also a^V in the values (eq. 3)
    # t5: buckets per direction pair (Raffel et al. 2020: 32)
    relative_buckets: int = bounded(32, ge=4)
    bucket_max_distance: int = 128  # t5: offsets beyond share the last bucket

    def check(self) -> None:
        if self.arch == "rnn" and self.bidirectional and self.hidden_dim % 2:
            raise ValueError(
                f"hidden_dim={self.hidden_dim} must be even with a bidirectional encoder "
                "(each direction gets hidden_dim/2)"
            )
        if self.arch == "transformer" and self.d_model % self.num_heads:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}"
            )
        if self.bucket_max_distance <= self.relative_buckets // 4:
            raise ValueError(
                f"bucket_max_distance must be > relative_buckets / 4, got "
                f"{self.bucket_max_distance} and {self.relative_buckets}"
            )
        if (
            self.arch == "transformer"
            and self.positions == "rope"
            and (self.d_model // self.num_heads) % 2
        ):
            raise ValueError(
                f"positions rope needs an even head width; d_model/num_heads = "
                f"{self.d_model // self.num_heads}"
            )


@dataclass
class GuidedAlignmentConfig(Checked):
    """Alignment-guided training (Garg et al. 2019, :mod:`attnkit.apps.translation.align.guided`):
    off unless ``file`` is set."""

    file: str | None = None  # Pharaoh links per training pair, over its words (split_words)
    one_based: bool = False  # indices count from 1 (the gold of attnkit translation data generate)
    # lambda of L = L_translation + lambda * L_a (Garg et al. 2019)
    weight: float = bounded(0.05, gt=0)
    layer: int = -2  # the supervised decoder layer (negative from the end): the penultimate
    head: int = bounded(0, ge=0)  # the supervised head of that layer


@dataclass
class TrainConfig(TrainSettings):
    """The engine's settings (:class:`~attnkit.engine.settings.TrainSettings`) and
    translation's own: token-count batches, label smoothing, BLEU at validation."""

    max_tokens: int = bounded(4096, ge=1)  # per batch, padded source or target, the larger
    label_smoothing: float = bounded(0.1, ge=0, lt=1)
    valid_bleu: bool = True  # greedy-decode the validation set every epoch; best epoch by BLEU
    guided_alignment: GuidedAlignmentConfig = field(default_factory=GuidedAlignmentConfig)


@dataclass
class DecodeConfig(Checked):
    """Search at translation and evaluation time."""

    beam_size: int = bounded(5, ge=1)
    length_penalty: float = 0.6  # GNMT alpha (Wu et al. 2016 eq. (14)); 0 = none
    n_best: int = bounded(1, ge=1)
    max_len_ratio: float = 1.5
    max_len_offset: int = 10
    # per decoding batch (source tokens x sentences, sorted by length)
    max_tokens: int = bounded(4000, ge=1)
    # autocast the search to bfloat16: the matrix products run in bf16, log-probabilities stay
    # fp32; faster where native, and scores differ in the last digits (BLEU measured in
    # docs/benchmarks.md). auto: on where the device computes bf16 natively (attnkit.precision)
    bf16: bool | Literal["auto"] = "auto"


@dataclass
class TranslationConfig(Checked):
    """A whole experiment: ``name`` plus the four sections (``data`` and ``model`` must be
    given: what to train on, and what to train)."""

    __required__: ClassVar[tuple[str, ...]] = ("data", "model")

    name: str = "experiment"
    task: Literal["translation"] = "translation"  # other tasks: see attnkit.apps
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)

    def check(self) -> None:
        guide, model = self.train.guided_alignment, self.model
        if guide.file is None:
            return
        if model.arch == "rnn":  # one attention: layer is ignored, the head must be 0
            layers, heads, layer = 1, 1, 0
        else:
            layers, heads, layer = model.decoder_layers, model.num_heads, guide.layer
        if not -layers <= layer < layers or guide.head >= heads:
            raise ValueError(
                f"train.guided_alignment: layer {guide.layer}, head {guide.head} do not exist "
                f"in a decoder of {layers} layer(s) with {heads} head(s)"
            )


ExperimentConfig = TranslationConfig  # the name before the applications shared one engine


def load_experiment(path: str | Path, overrides: Sequence[str] = ()) -> TranslationConfig:
    """Read an experiment YAML file (``--set`` overrides applied); errors name the file, line
    and field."""
    return load_yaml(TranslationConfig, path, overrides)
