"""The configuration of a stocks run: ``data``, ``model`` and ``train``.

``task: stocks``; see ``configs/stocks-alpha-t-rim.yaml``. :func:`load_config` rejects unknown
keys and bad values with the file, line and field (:mod:`attnkit.config`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from attnkit.apps.stocks.model import StockModelConfig
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings

# the features each source reads when ``features`` is not given; the first is the price
DEFAULT_FEATURES = {
    "generated": ["close", "sentiment", "articles"],
    "paper": ["close", "conv_filter"],
}


@dataclass
class StockDataConfig(Checked):
    """Which series, and the paper's windows: ``window`` input days, ``horizon`` days ahead."""

    source: Literal["generated", "paper", "csv"] = "generated"
    features: list[str] = field(default_factory=list)  # first = the price; [] = the source's
    window: int = bounded(10, ge=1)  # input days (the paper: 5, 10, 21)
    horizon: int = bounded(5, ge=1)  # days ahead, each forecast at once (the paper: 1 .. 5)
    # train, validation; the rest is the test split
    shares: tuple[float, float] = bounded((0.7, 0.2), ge=0, lt=1)
    # a holdout date: train and validation share the days up to it (in the ratio of `shares`),
    # the test split forecasts every later day
    until: date | None = None
    # paper: ../shared/data/stocks/df_cut.csv (or data_dir/stocks, $ATTNKIT_DATA_DIR/stocks)
    ticker: str = "AMZN"
    data_dir: Path | None = None
    # csv: any file with a date column and named numeric columns (rows kept where `where` holds)
    path: Path | None = None
    date_column: str = "date"
    where: dict[str, str] = field(default_factory=dict)
    # generated: a random walk whose returns follow lagged sentiment in known regimes
    days: int = 1500
    seed: int = 0
    strength: float = 0.8  # correlation of a regime day's return with lagged sentiment
    lag: int = 1
    share: float = 0.5  # fraction of days inside sentiment regimes
    regime_days: int = 20  # mean length of a regime (short: the test split holds several)

    def check(self) -> None:
        train, valid = self.shares
        if not (train > 0 and train + valid < 1):
            raise ValueError(
                f"shares must be (train, valid) with a test split left, got {list(self.shares)}"
            )
        if self.source == "csv" and self.path is None:
            raise ValueError("source 'csv' needs path (a CSV with a date column)")
        if self.source == "csv" and not self.features:
            raise ValueError("source 'csv' needs features (column names; the first is the price)")
        if len(set(self.features)) != len(self.features):
            raise ValueError(f"features lists a column twice: {self.features}")

    @property
    def columns(self) -> list[str]:
        """The features read, the price first."""
        return list(self.features) or list(DEFAULT_FEATURES[self.source])


@dataclass
class StockTrainConfig(TrainSettings):
    """The engine's settings with the stocks defaults (MSE on standardised log prices)."""

    epochs: int = 60
    batch_size: int = bounded(32, ge=1)
    learning_rate: float = 3e-3
    schedule: Schedule = "constant"
    patience: int = 15
    seed: int = 0
    # float32: bf16 rounding (3 digits) is a 0.4% price error
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "fp32"
    arima: bool = True  # fit the ARIMA baseline on the training days and score it too


@dataclass
class StocksConfig:
    """A whole stocks run: ``name`` plus the three sections."""

    name: str = "stocks"
    task: Literal["stocks"] = "stocks"
    data: StockDataConfig = field(default_factory=StockDataConfig)
    model: StockModelConfig = field(default_factory=StockModelConfig)
    train: StockTrainConfig = field(default_factory=StockTrainConfig)


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> StocksConfig:
    """Read a stocks YAML config after ``overrides``; errors name file, line, field."""
    return load_yaml(StocksConfig, path, overrides)
