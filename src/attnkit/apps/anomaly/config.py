"""The anomaly-detection configuration: a detector's settings (``detector:``), the data
(``data:``) and the experiment around them. Every field declares its range
(:func:`attnkit.config.bounded`), so a bad value in a config file is refused at load time with
its file, line and field (:func:`attnkit.config.load_yaml`), and in code when built."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from attnkit import devices
from attnkit.config import Checked, bounded


@dataclass
class DetectorConfig(Checked):
    """One detector's model, training and scoring settings (the ``detector:`` config section)."""

    model: Literal["transformer", "vrae"] = "transformer"
    window: int = bounded(32, ge=2)  # W rows per window
    # transformer forecaster
    d_model: int = bounded(16, ge=1)
    num_heads: int = bounded(2, ge=1)
    d_ff: int = bounded(32, ge=1)
    num_layers: int = bounded(1, ge=1)
    # VRAE
    hidden: int = bounded(16, ge=1)
    latent: int = bounded(4, ge=1)
    # weight of the attention KL (Pereira & Silveira 2018)
    eta: float = bounded(0.01, ge=0, finite=True)
    samples: int = bounded(4, ge=0)  # Monte Carlo draws for the reconstruction probability
    # the score averages the NLL of the window's last rows (1 .. W)
    score_rows: int = bounded(1, ge=1)
    # training (one engine run per series: Adam, gradient norm clipped at 5, constant rate)
    # rows trained on: min(floor(f T), max_train_rows)
    train_fraction: float = bounded(0.15, gt=0, le=1)
    max_train_rows: int = bounded(750, ge=1)
    # updates, each on batch_size windows drawn with replacement
    steps: int = bounded(300, ge=1)
    batch_size: int = bounded(64, ge=1)
    learning_rate: float = bounded(0.003, gt=0, finite=True)
    kl_anneal_steps: int = bounded(100, ge=1)  # VRAE: KL weight rises linearly from 0 to 1
    # also a resumable checkpoint every N updates; 0: at the end only
    checkpoint_every: int = bounded(0, ge=0)
    # > 0: after scoring each block of this many rows, learn from them
    online_every: int = bounded(0, ge=0)
    online_steps: int = bounded(20, ge=1)  # steps per online update (learning rate / 3)
    # an update trains on windows ending in the last rows
    online_history: int = bounded(2000, ge=1)
    seed: int = bounded(0, ge=0)
    # scoring
    likelihood: bool = True  # anomaly likelihood of the raw scores (Ahmad et al. 2017)
    long_window: int = bounded(8640, ge=1)
    short_window: int = bounded(10, ge=1)
    likelihood_of_averages: bool = False  # fit the likelihood to the short-window means (nupic)
    # alert suppression on the score (suppress_alerts): an alert within suppress_rows rows of
    # an earlier one is lowered to suppress_floor; 0 = off. The defaults are in the log-scale
    # likelihood's units (0.5: L = 0.99999, 0.3: L = 0.999), the values Numenta's HTM uses
    suppress_rows: int = bounded(0, ge=0)
    suppress_threshold: float = bounded(0.5, finite=True)
    suppress_floor: float = bounded(0.3, finite=True)
    # on the score; replaced by the tuned one after training where the series are labelled
    # (without labels it is used as it is: 0.5 on the likelihood's log scale is L = 0.99999)
    threshold: float = bounded(0.5, finite=True)
    # where each detector trains: auto, cpu, cuda, cuda:N or mps (attnkit.devices)
    device: str = "auto"

    def check(self) -> None:
        if not devices.valid(self.device):
            raise ValueError(f"device must be {devices.DESCRIBED}, got {self.device!r}")
        if self.d_model % self.num_heads:
            raise ValueError(
                f"num_heads must divide d_model ({self.d_model}), got {self.num_heads}"
            )
        if self.score_rows > self.window:
            raise ValueError(
                f"score_rows must be in 1 .. window ({self.window}), got {self.score_rows}"
            )
        if self.suppress_rows and self.suppress_floor >= self.suppress_threshold:
            raise ValueError(
                f"suppress_floor ({self.suppress_floor}) must be below "
                f"suppress_threshold ({self.suppress_threshold})"
            )


@dataclass
class AnomalyData(Checked):
    """Which series to train and evaluate on (the ``data:`` section)."""

    source: Literal["nab", "solar", "csv"] = "solar"
    data_dir: str = ""  # NAB: default $ATTNKIT_DATA_DIR/nab, else ../shared/data/nab
    files: list[str] = field(default_factory=list)  # NAB keys (default all 58) or CSV paths
    value_columns: list[str] = field(default_factory=list)  # CSV (default: all but timestamp)
    series: int = bounded(3, ge=1)  # solar: training series (test series: other seeds)
    days: int = bounded(60, ge=1)
    steps_per_day: int = bounded(48, ge=1)
    # solar: anomaly-free days first (keep the training rows inside them)
    clean_days: int = bounded(14, ge=0)
    seed: int = bounded(0, ge=0)

    def check(self) -> None:
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
