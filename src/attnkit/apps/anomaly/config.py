"""The anomaly-detection configuration: a detector's settings (``detector:``), the data
(``data:``) and the experiment around them. Every range is checked when the dataclass is built,
so a bad value in a config file is refused at load time with its file, line and field
(:func:`attnkit.config.load_yaml`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal


def _check(obj, rule: str, names: tuple[str, ...]) -> None:
    """Raise ``ValueError("NAME must be ...")`` for the first of ``names`` that breaks ``rule``:
    ``positive`` (> 0, finite), ``non-negative`` (>= 0, finite) or ``fraction`` (in (0, 1])."""
    tests = {
        "positive": lambda v: math.isfinite(v) and v > 0,
        "non-negative": lambda v: math.isfinite(v) and v >= 0,
        "fraction": lambda v: 0 < v <= 1,
    }
    wanted = {"positive": "positive", "non-negative": ">= 0", "fraction": "in (0, 1]"}[rule]
    for name in names:
        value = getattr(obj, name)
        if not tests[rule](value):
            raise ValueError(f"{name} must be {wanted}, got {value!r}")


@dataclass
class DetectorConfig:
    """One detector's model, training and scoring settings (the ``detector:`` config section)."""

    model: Literal["transformer", "vrae"] = "transformer"
    window: int = 32  # W rows per window
    # transformer forecaster
    d_model: int = 16
    num_heads: int = 2
    d_ff: int = 32
    num_layers: int = 1
    # VRAE
    hidden: int = 16
    latent: int = 4
    eta: float = 0.01  # weight of the attention KL (Pereira & Silveira 2018)
    samples: int = 4  # Monte Carlo draws for the reconstruction probability
    score_rows: int = 1  # the score averages the NLL of the window's last rows (1 .. W)
    # training (one engine run per series: Adam, gradient norm clipped at 5, constant rate)
    train_fraction: float = 0.15  # rows trained on: min(floor(f T), max_train_rows)
    max_train_rows: int = 750
    steps: int = 300  # updates, each on batch_size windows drawn with replacement
    batch_size: int = 64
    learning_rate: float = 0.003
    kl_anneal_steps: int = 100  # VRAE: KL weight rises linearly from 0 to 1
    checkpoint_every: int = 0  # also a resumable checkpoint every N updates; 0: at the end only
    online_every: int = 0  # > 0: after scoring each block of this many rows, learn from them
    online_steps: int = 20  # steps per online update (learning rate / 3)
    online_history: int = 2000  # an update trains on windows ending in the last rows
    seed: int = 0
    # scoring
    likelihood: bool = True  # anomaly likelihood of the raw scores (Ahmad et al. 2017)
    long_window: int = 8640
    short_window: int = 10
    likelihood_of_averages: bool = False  # fit the likelihood to the short-window means (nupic)
    # alert suppression on the score (suppress_alerts): an alert within suppress_rows rows of
    # an earlier one is lowered to suppress_floor; 0 = off. The defaults are in the log-scale
    # likelihood's units (0.5: L = 0.99999, 0.3: L = 0.999), the values Numenta's HTM uses
    suppress_rows: int = 0
    suppress_threshold: float = 0.5
    suppress_floor: float = 0.3
    threshold: float = 0.5  # on the score; replaced by the tuned one after training

    def __post_init__(self) -> None:
        if self.window < 2:
            raise ValueError(f"window must be at least 2 rows, got {self.window}")
        sizes = ("d_model", "num_heads", "d_ff", "num_layers", "hidden", "latent")
        _check(self, "positive", (*sizes, "max_train_rows", "steps", "batch_size"))
        _check(self, "positive", ("learning_rate", "kl_anneal_steps", "online_steps"))
        _check(self, "positive", ("online_history", "long_window", "short_window"))
        _check(self, "non-negative", ("eta", "samples", "checkpoint_every", "online_every"))
        _check(self, "non-negative", ("seed", "suppress_rows"))
        _check(self, "fraction", ("train_fraction",))
        if self.d_model % self.num_heads:
            raise ValueError(
                f"num_heads must divide d_model ({self.d_model}), got {self.num_heads}"
            )
        if not 1 <= self.score_rows <= self.window:
            raise ValueError(f"score_rows must be in 1 .. window ({self.window}), got "
                             f"{self.score_rows}")  # fmt: skip
        if self.suppress_rows and self.suppress_floor >= self.suppress_threshold:
            raise ValueError(f"suppress_floor ({self.suppress_floor}) must be below "
                             f"suppress_threshold ({self.suppress_threshold})")  # fmt: skip
        for name in ("suppress_threshold", "suppress_floor", "threshold"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)}")


@dataclass
class AnomalyData:
    """Which series to train and evaluate on (the ``data:`` section)."""

    source: Literal["nab", "solar", "csv"] = "solar"
    data_dir: str = ""  # NAB: default $ATTNKIT_DATA_DIR/nab, else ../shared/data/nab
    files: list[str] = field(default_factory=list)  # NAB keys (default all 58) or CSV paths
    value_columns: list[str] = field(default_factory=list)  # CSV (default: all but timestamp)
    series: int = 3  # solar: training series (test series use other seeds)
    days: int = 60
    steps_per_day: int = 48
    clean_days: int = 14  # solar: anomaly-free days first (keep the training rows inside them)
    seed: int = 0

    def __post_init__(self) -> None:
        _check(self, "positive", ("series", "days", "steps_per_day"))
        _check(self, "non-negative", ("clean_days", "seed"))
        if self.clean_days > self.days:
            raise ValueError(f"clean_days ({self.clean_days}) must not exceed days ({self.days})")


@dataclass
class AnomalyConfig:
    """An anomaly-detection experiment."""

    __required__: ClassVar[tuple[str, ...]] = ("data", "detector")  # what to fit, on what

    task: str = "anomaly-detection"
    name: str = "anomaly"
    profile: Literal["standard", "reward_low_FP_rate", "reward_low_FN_rate"] = "standard"
    data: AnomalyData = field(default_factory=AnomalyData)
    detector: DetectorConfig = field(default_factory=DetectorConfig)
