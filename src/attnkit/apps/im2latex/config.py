"""The configuration of an image-to-LaTeX run (``task: im2latex``): ``data``, ``model`` and
``train``; see ``configs/formulas-im2latex.yaml``. :func:`load_config` rejects unknown keys and
bad values with the file, line and field (:mod:`attnkit.config`).

Data: formulas generated from a grammar and rendered with matplotlib's mathtext
(:mod:`~attnkit.apps.im2latex.grammar`), and optionally a folder of real image/formula pairs
(``real``; the im2markup layout of ``../shared/data/im2latex-sample`` or a ``formulas.tsv``,
:mod:`~attnkit.apps.im2latex.pairs`) whose training split is added to the generated one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.apps.im2latex.model import FormulaModelConfig
from attnkit.config import load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class FormulaDataConfig:
    """Which formulas, and how large an image may be."""

    seed: int = 0  # the generated splits are pure functions of the seed
    generated: tuple[int, int, int] = (6000, 200, 500)  # generated train / valid / test
    max_tokens: int = 40  # the longest generated formula, in tokens
    noise: float = 0.03  # pixel noise on generated images
    # a folder of real pairs (im2markup layout or formulas.tsv); a relative name is looked up
    # in data_dir (default $ATTNKIT_DATA_DIR or ../shared/data), e.g. im2latex-sample
    real: str | None = None
    real_repeat: int = 1  # each real training image is seen this many times per epoch
    real_limit: int | None = None  # read at most this many real pairs per split (tests)
    data_dir: Path | None = None
    valid: Literal["generated", "real"] = "generated"  # the split that picks the best epoch
    max_height: int = 128  # larger images are scaled down to fit (aspect kept)
    max_width: int = 512
    max_target: int = 150  # training formulas with more tokens are left out (and counted)

    def __post_init__(self) -> None:
        if len(self.generated) != 3 or min(self.generated) < 0:
            raise ValueError(f"generated is [train, valid, test] >= 0, got {list(self.generated)}")
        if self.generated[0] < 1 and self.real is None:
            raise ValueError("no training data: generated[0] is 0 and no real folder is given")
        if self.valid == "real" and self.real is None:
            raise ValueError("valid: real needs a real folder (data.real)")
        for name in ("max_tokens", "real_repeat", "max_height", "max_width", "max_target"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.real_limit is not None and self.real_limit < 1:
            raise ValueError(f"real_limit must be at least 1, got {self.real_limit}")
        if not 0 <= self.noise <= 0.5:
            raise ValueError(f"noise must be in [0, 0.5], got {self.noise}")


@dataclass
class FormulaTrainConfig(TrainSettings):
    """The engine's settings with this task's defaults, plus the batch and decoding."""

    epochs: int = 12
    learning_rate: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: Schedule = "warmup_constant"
    warmup_steps: int = 200
    clip_norm: float = 5.0  # the paper clips gradients at 5 (Deng et al. §4)
    patience: int = 100
    seed: int = 0
    batch_size: int = 32
    label_smoothing: float = 0.0
    beam: int = 5  # evaluate and predict: beam size (1 = greedy); validation decodes greedily
    max_len: int = 160  # longest formula decoded, in tokens

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("batch_size", "beam", "max_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 <= self.label_smoothing < 1:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if self.schedule == "plateau":
            raise ValueError(
                "schedule 'plateau' needs a validation loss, which im2latex does not compute "
                "(it validates by decoding); choose warmup_constant, constant or another"
            )


@dataclass
class Im2LatexConfig:
    """A whole image-to-LaTeX run: ``name`` plus the three sections."""

    name: str = "formulas"
    task: Literal["im2latex"] = "im2latex"
    data: FormulaDataConfig = field(default_factory=FormulaDataConfig)
    model: FormulaModelConfig = field(default_factory=FormulaModelConfig)
    train: FormulaTrainConfig = field(default_factory=FormulaTrainConfig)

    def __post_init__(self) -> None:
        rows = -(-self.data.max_height // self.model.stride[0])
        if self.model.row_encoder and rows > self.model.max_rows:
            raise ValueError(
                f"data.max_height {self.data.max_height} gives {rows} feature rows but "
                f"model.max_rows is {self.model.max_rows}; raise max_rows or lower max_height"
            )


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> Im2LatexConfig:
    """Read an im2latex YAML config after ``overrides``; errors name file, line and field."""
    return load_yaml(Im2LatexConfig, path, overrides)
