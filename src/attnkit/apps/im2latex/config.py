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
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class FormulaDataConfig(Checked):
    """Which formulas, and how large an image may be."""

    seed: int = 0  # the generated splits are pure functions of the seed
    # generated train / valid / test
    generated: tuple[int, int, int] = bounded((6000, 200, 500), ge=0)
    max_tokens: int = bounded(40, ge=1)  # the longest generated formula, in tokens
    # true: generated[0] new training formulas every epoch, rendered in the batch's collate
    # (in train.workers processes); false: one fixed pool of generated[0] (:mod:`.fresh`)
    fresh: bool = False
    noise: float = bounded(0.03, ge=0, le=0.5)  # pixel noise on generated images
    # a folder of real pairs (im2markup layout or formulas.tsv); a relative name is looked up
    # in data_dir (default $ATTNKIT_DATA_DIR or ../shared/data), e.g. im2latex-sample
    real: str | None = None
    # each real training image is seen this many times per epoch
    real_repeat: int = bounded(1, ge=1)
    # read at most this many real pairs per split (tests)
    real_limit: int | None = bounded(None, ge=1)
    data_dir: Path | None = None
    valid: Literal["generated", "real"] = "generated"  # the split that picks the best epoch
    max_height: int = bounded(128, ge=1)  # larger images are scaled down to fit (aspect kept)
    max_width: int = bounded(512, ge=1)
    # training formulas with more tokens are left out (and counted)
    max_target: int = bounded(150, ge=1)

    def check(self) -> None:
        if self.generated[0] < 1 and self.real is None:
            raise ValueError("no training data: generated[0] is 0 and no real folder is given")
        if self.valid == "real" and self.real is None:
            raise ValueError("valid: real needs a real folder (data.real)")


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
    batch_size: int = bounded(32, ge=1)
    label_smoothing: float = bounded(0.0, ge=0, lt=1)
    # evaluate and predict: beam size (1 = greedy); validation decodes greedily
    beam: int = bounded(5, ge=1)
    max_len: int = bounded(160, ge=1)  # longest formula decoded, in tokens
    # the beam's GNMT length penalty alpha; valid: the best of length_penalties on the
    # validation split, chosen at the first beam decoding (:mod:`.length_penalty`)
    length_penalty: float | Literal["valid"] = 0.0
    length_penalties: list[float] = bounded(factory=lambda: [0.0, 0.5, 1.0, 1.5], ge=0)

    def check(self) -> None:
        super().check()
        if not self.length_penalties:
            raise ValueError("length_penalties needs at least one alpha to choose from")
        if self.schedule == "plateau":
            raise ValueError(
                "schedule 'plateau' needs a validation loss, which im2latex does not compute "
                "(it validates by decoding); choose warmup_constant, constant or another"
            )


@dataclass
class Im2LatexConfig(Checked):
    """A whole image-to-LaTeX run: ``name`` plus the three sections."""

    name: str = "formulas"
    task: Literal["im2latex"] = "im2latex"
    data: FormulaDataConfig = field(default_factory=FormulaDataConfig)
    model: FormulaModelConfig = field(default_factory=FormulaModelConfig)
    train: FormulaTrainConfig = field(default_factory=FormulaTrainConfig)

    def check(self) -> None:
        rows = -(-self.data.max_height // self.model.stride[0])
        if self.model.row_encoder and rows > self.model.max_rows:
            raise ValueError(
                f"data.max_height {self.data.max_height} gives {rows} feature rows but "
                f"model.max_rows is {self.model.max_rows}; raise max_rows or lower max_height"
            )


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> Im2LatexConfig:
    """Read an im2latex YAML config after ``overrides``; errors name file, line and field."""
    return load_yaml(Im2LatexConfig, path, overrides)
