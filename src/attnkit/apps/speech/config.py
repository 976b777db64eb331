"""The configuration of a speech recognition run (``task: speech``): ``data``, ``model`` and
``train``; see ``configs/fsdd-las.yaml`` and ``configs/an4-las.yaml``. :func:`load_config`
rejects unknown keys and bad values with the file, line and field (:mod:`attnkit.config`).

Data (:mod:`~attnkit.apps.speech.data`):

- ``fsdd``: spoken digit strings joined from Free Spoken Digit Dataset recordings
  (:mod:`~attnkit.apps.speech.digits`), 40 log-mel bands. Splits ``train`` and ``valid`` from
  the training recordings (5-49; the validation strings are other combinations of the same
  recordings, drawn with another seed), ``test`` (``test_lengths`` digits) and ``test-long``
  (``long_lengths`` digits, longer than trained: Chorowski et al. 2015, §4-5) from the test
  recordings (0-4). Every speaker is in every split.
- ``an4``: CMU AN4's 13 MFCCs (:mod:`~attnkit.apps.speech.an4`). AN4 ships train (948) and
  test (130) only; the last ``valid_utterances`` of its training list (48 by default) are
  held out as ``valid`` and the rest (900) train.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.apps.speech.model import SpeechModelConfig
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings

MFCC = 13  # AN4's cepstra per frame


@dataclass
class SpeechDataConfig(Checked):
    """Which utterances, and their features."""

    source: Literal["fsdd", "an4"] = "fsdd"
    seed: int = bounded(0, ge=0)  # the digit strings are pure functions of it
    # the shared data folder (default $ATTNKIT_DATA_DIR or ../shared/data): fsdd/recordings
    # and an4-mfcc below it
    data_dir: Path | None = None
    # fsdd: train / valid / test digit strings (test-long has as many as test)
    counts: tuple[int, int, int] = bounded((3000, 200, 300), ge=0)
    train_lengths: tuple[int, int] = bounded((1, 3), ge=1)  # digits per training string
    test_lengths: tuple[int, int] = bounded((1, 3), ge=1)  # the test split
    long_lengths: tuple[int, int] = bounded((5, 7), ge=1)  # the test-long split
    n_mels: int = bounded(40, ge=1)  # log-mel bands of the fsdd features
    # SpecAugment masks on training features (Park et al. 2019; :mod:`.specaugment`)
    spec_augment: bool = False
    # an4: the last N utterances of AN4's training list are the validation split
    valid_utterances: int = bounded(48, ge=0)
    units: Literal["chars", "words"] = "chars"  # an4's output tokens (fsdd: digits)
    limit: int | None = bounded(None, ge=1)  # an4: read at most N utterances a split (tests)

    def check(self) -> None:
        for name in ("train_lengths", "test_lengths", "long_lengths"):
            low, high = getattr(self, name)
            if low > high:
                raise ValueError(f"{name} must be [low, high] with low <= high, got {low} > {high}")
        if self.source == "fsdd" and self.counts[0] < 1:
            raise ValueError("no training data: counts[0] (training digit strings) is 0")

    @property
    def n_features(self) -> int:
        """The width of a feature frame: ``n_mels`` for fsdd, 13 MFCCs for an4."""
        return self.n_mels if self.source == "fsdd" else MFCC


@dataclass
class SpeechTrainConfig(TrainSettings):
    """The engine's settings with this task's defaults, plus the batch and decoding."""

    epochs: int = 30
    learning_rate: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: Schedule = "warmup_constant"
    warmup_steps: int = 100
    clip_norm: float = 5.0
    patience: int = 8
    seed: int = 0
    batch_size: int = bounded(16, ge=1)
    label_smoothing: float = bounded(0.0, ge=0, lt=1)  # of the attention cross-entropy
    beam: int = bounded(4, ge=1)  # evaluate and predict (1 = greedy); validation is greedy
    max_len: int = bounded(200, ge=1)  # most output tokens decoded
    # lambda of joint decoding (Watanabe et al. 2017): the beam's hypotheses re-ranked by
    # lambda log p_ctc + (1 - lambda) log p_att; 0 = the speller alone. Needs both heads
    ctc_rescore: float = bounded(0.0, ge=0, le=1)

    def check(self) -> None:
        super().check()
        if self.schedule == "plateau":
            raise ValueError(
                "schedule 'plateau' needs a validation loss, which speech does not compute "
                "(it validates by decoding); choose warmup_constant, constant or another"
            )


@dataclass
class SpeechConfig(Checked):
    """A whole speech run: ``name`` plus the three sections."""

    name: str = "speech"
    task: Literal["speech"] = "speech"
    data: SpeechDataConfig = field(default_factory=SpeechDataConfig)
    model: SpeechModelConfig = field(default_factory=SpeechModelConfig)
    train: SpeechTrainConfig = field(default_factory=SpeechTrainConfig)

    def check(self) -> None:
        if self.train.ctc_rescore > 0 and not 0 < self.model.ctc_weight < 1:
            raise ValueError(
                f"train.ctc_rescore {self.train.ctc_rescore} rescores with both heads, but "
                f"model.ctc_weight {self.model.ctc_weight} builds only one; set ctc_rescore: 0 "
                "or a ctc_weight between 0 and 1"
            )
        if self.model.n_features != self.data.n_features:
            what = f"{self.data.n_mels} log-mel bands" if self.data.source == "fsdd" else "MFCCs"
            raise ValueError(
                f"model.n_features is {self.model.n_features} but {self.data.source} gives "
                f"{self.data.n_features} ({what}); set model.n_features: {self.data.n_features}"
            )


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> SpeechConfig:
    """Read a speech YAML config after ``overrides``; errors name file, line and field."""
    return load_yaml(SpeechConfig, path, overrides)
