"""The configuration of a GPT language-model run (``task: language-model``): ``data``,
``model`` and ``train``.

See ``configs/shakespeare-gpt-cpu.yaml`` (nanoGPT's CPU recipe) and
``configs/shakespeare-gpt.yaml`` (nanoGPT's default sizes, for a GPU). :func:`load_config`
rejects unknown keys and bad values with the file, line and field (:mod:`attnkit.config`).

An *epoch* here is ``eval_interval`` updates on random blocks of the training text, followed by
the validation loss on ``eval_iters`` random blocks of the validation text, as nanoGPT
evaluates (its ``estimate_loss``), so ``epochs: 8`` with ``eval_interval: 250`` is nanoGPT's
``max_iters: 2000``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class GPTDataConfig(Checked):
    """The text: ``shakespeare`` (``../shared/data/tinyshakespeare/input.txt``, or under
    ``data_dir``) or any UTF-8 ``text`` file at ``path``; the first ``train_share`` of its
    characters train, the rest validate (nanoGPT's split: 0.9). Or ``repeated``: blocks of
    ``half`` random tokens of ``vocab_size`` repeated (``block_size = 2 * half``), where
    induction heads form (Olsson et al. 2022)."""

    source: Literal["shakespeare", "text", "repeated"] = "shakespeare"
    path: Path | None = None  # source text: the file
    data_dir: Path | None = None  # source shakespeare: holds tinyshakespeare/
    train_share: float = bounded(0.9, gt=0, lt=1)
    block_size: int = bounded(64, ge=2)  # the context: characters a model sees at once
    vocab_size: int | None = bounded(None, ge=2)  # source repeated: the random tokens' count
    half: int | None = bounded(None, ge=2)  # source repeated: a copy's length (block_size / 2)
    # source repeated: training rows repeat a period drawn from min_period .. half (None: half
    # only, where one fixed-offset head solves the repeat); validation keeps half
    min_period: int | None = bounded(None, ge=2)

    def check(self) -> None:
        if self.source == "text" and self.path is None:
            raise ValueError("source 'text' needs path (a UTF-8 text file)")
        if self.source != "repeated":
            for name in ("vocab_size", "half", "min_period"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} is for source 'repeated', not {self.source!r}")
            return
        for name in ("path", "data_dir"):
            if getattr(self, name) is not None:
                raise ValueError(f"{name} is not read by source 'repeated' (random tokens)")
        if self.vocab_size is None:
            raise ValueError("vocab_size is needed by source 'repeated' (e.g. 50)")
        if self.half is None:
            raise ValueError("half is needed by source 'repeated': block_size / 2")
        if 2 * self.half != self.block_size:
            raise ValueError(
                f"half must be block_size / 2 for source 'repeated', got {self.half} "
                f"with block_size {self.block_size}"
            )
        if self.min_period is not None and self.min_period > self.half:
            raise ValueError(
                f"min_period must be at most half ({self.half}), got {self.min_period}"
            )


@dataclass
class GPTModelConfig(Checked):
    """The decoder-only Transformer (Radford et al. 2018, 2019): pre-LN blocks of causal
    self-attention and an MLP, tied input and output embeddings."""

    layers: int = bounded(4, ge=1)
    heads: int = bounded(4, ge=1)
    kv_heads: int | None = bounded(None, ge=1)  # None: heads; 1: multi-query; else grouped
    width: int = bounded(128, ge=1)  # D
    mlp_ratio: int = bounded(4, ge=1)  # the MLP's inner width is mlp_ratio * D
    dropout: float = bounded(0.0, ge=0, lt=1)
    bias: bool = True  # biases in the linear layers and LayerNorms (GPT-2: true)
    # learned (GPT-2), rope (Su et al. 2021), alibi (Press et al. 2022) or none
    positions: Literal["learned", "rope", "alibi", "none"] = "learned"
    window: int | None = bounded(None, ge=1)  # sliding-window attention (None: full causal)
    activation: Literal["gelu", "gelu_tanh"] = "gelu"  # gelu_tanh: GPT-2's approximation
    mlp: bool = True  # false: an attention-only model (induction heads, Olsson et al. 2022)
    tie_embeddings: bool = True  # the output layer reuses the token embedding (Press & Wolf)
    norm_eps: float = bounded(1e-5, gt=0)

    def check(self) -> None:
        if self.width % self.heads:
            raise ValueError(f"width {self.width} must be divisible by heads {self.heads}")
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ValueError(f"kv_heads {self.kv_heads} must divide heads {self.heads}")


@dataclass
class GPTTrainConfig(TrainSettings):
    """The engine's settings with nanoGPT's Shakespeare defaults: AdamW (0.9, 0.99), weight
    decay 0.1, 100 warm-up updates then a cosine decay to a tenth of the rate, gradient
    clipping at 1."""

    epochs: int = 8  # of eval_interval updates each
    eval_interval: int = bounded(250, ge=1)  # updates between validations
    eval_iters: int = bounded(20, ge=1)  # random validation blocks' batches per validation
    batch_size: int = bounded(12, ge=1)
    optimiser: Literal["adam", "adamw"] = "adamw"
    learning_rate: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.99)
    weight_decay: float = 0.1
    decay_matrices_only: bool = True  # nanoGPT: weight matrices and embeddings only
    schedule: Schedule = "warmup_cosine"
    warmup_steps: int = 100
    min_lr_ratio: float = 0.1  # nanoGPT's min_lr 1e-4 for its rate 1e-3
    patience: int = 1000  # nanoGPT trains to the end; the best validation is kept
    seed: int = 1337  # nanoGPT's


@dataclass
class GPTConfig(Checked):
    name: str = "gpt"
    task: Literal["language-model"] = "language-model"
    data: GPTDataConfig = field(default_factory=GPTDataConfig)
    model: GPTModelConfig = field(default_factory=GPTModelConfig)
    train: GPTTrainConfig = field(default_factory=GPTTrainConfig)


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> GPTConfig:
    """Read and check a language-model YAML config, after ``--set section.key=value``
    ``overrides`` (errors name the file and line, or the option, and the field)."""
    return load_yaml(GPTConfig, path, overrides)
