"""The holdout check (issue 35, item 3 for stocks): ``data.until`` trains and validates on the
days up to a date and tests on every later day; ``attnkit evaluate RUN`` then scores the
holdout, and ``evaluate RUN --src LATER.csv`` the same windows from a file of the later rows.
Dates are checked with file, line and field."""

from __future__ import annotations

import json
from datetime import date

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from attnkit.apps.stocks.config import StockDataConfig, load_config
from attnkit.apps.stocks.series import PriceSeries, StockDataError, write_csv
from attnkit.apps.stocks.sets import load_series, load_sets
from attnkit.cli import app
from attnkit.config import ConfigError

UNTIL = "2016-01-29"  # the 281st of the 400 generated business days from 2015-01-02
KNOWN = 281
CONFIG = {
    "name": "tiny-holdout", "task": "stocks",
    "data": {"source": "generated", "days": 400, "window": 5, "horizon": 2,
             "features": ["close", "sentiment"], "until": date.fromisoformat(UNTIL)},
    "model": {"kind": "alpha_t_rim", "cells": 4, "active": 2, "units": 4, "predict": "change"},
    "train": {"epochs": 2, "batch_size": 32, "arima": False},
}  # fmt: skip


def _data(**changes) -> StockDataConfig:
    fields = {k: v for k, v in CONFIG["data"].items() if k != "until"}
    return StockDataConfig(**{**fields, "until": date.fromisoformat(UNTIL), **changes})


def test_until_splits_train_and_valid_before_it_and_tests_every_later_day():
    sets = load_sets(_data())
    dates, horizon = sets.series.dates, 2
    known = int((dates <= np.datetime64(UNTIL)).sum())
    assert known == KNOWN and str(dates[known - 1]) == UNTIL
    assert sets.n_train == KNOWN * 7 // 9  # 0.7 : 0.2 of the days up to it
    train, valid, test = (sets.windows[k] for k in ("train", "valid", "test"))
    assert train.last.max() + horizon < sets.n_train  # no target leaves its split
    assert valid.last.min() - 4 >= sets.n_train and valid.last.max() + horizon < known
    first = test.last + 1  # each test window's first forecast day: every day after UNTIL
    assert first.tolist() == list(range(known, 400 - horizon + 1))
    assert test.last[0] - 4 == known - 5  # its inputs reach back before the date
    # the scaling is the training days' alone
    assert sets.scaling.mean[1] == pytest.approx(sets.series.values[: sets.n_train, 1].mean())


def test_without_until_the_split_is_the_shares_as_before():
    sets = load_sets(_data(until=None))
    assert sets.n_train == 280 and sets.windows["test"].last[0] == 360 + 4


def test_until_outside_the_series_is_named():
    with pytest.raises(StockDataError, match=r"data.until 2014-01-01 is before the first day"):
        load_sets(_data(until=date(2014, 1, 1)))
    with pytest.raises(StockDataError, match=r"data.until 2016-07-14 is on or after the last"):
        load_sets(_data(until=date(2016, 7, 14)))
    with pytest.raises(StockDataError, match="training days cannot hold one window"):
        load_sets(_data(until=date(2015, 1, 8)))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2019-02-30", "line 5: '2019-02-30' is not a date (day is out of range for month)"),
        ("'2019-06-30 10:00'", "line 5: data.until must be a date (YYYY-MM-DD)"),
        ("june", "line 5: data.until must be a date (YYYY-MM-DD), got 'june'"),
        ("2019", "line 5: data.until must be a date (YYYY-MM-DD), got 2019"),
    ],
)
def test_a_bad_date_names_the_file_line_and_field(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(f"name: c\ntask: stocks\ndata:\n  source: generated\n  until: {text}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}, {message}")


def test_a_date_quoted_or_not_and_from_set_is_read(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: c\ntask: stocks\ndata:\n  until: '2019-06-30'\n")
    assert load_config(path).data.until == date(2019, 6, 30)
    assert load_config(path, ["data.until=2019-07-01"]).data.until == date(2019, 7, 1)
    with pytest.raises(ConfigError, match=r"--set data.until=2019-13-01: .*month must be"):
        load_config(path, ["data.until=2019-13-01"])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("stocks-holdout")
    config = root / "c.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    assert f"until: {UNTIL}" in config.read_text()  # an unquoted YAML date
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(root / "run")])
    assert result.exit_code == 0, result.output
    return root / "run"


def test_evaluate_scores_the_holdout_and_later_rows_from_a_file_agree(run_dir, tmp_path):
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["seen_until"] == UNTIL  # the last validation target is the date itself
    split = json.loads(CliRunner().invoke(app, ["evaluate", str(run_dir), "--json"]).stdout)
    assert split["count"] == 400 - KNOWN - 2 + 1
    series, _ = load_series(_data())
    later = PriceSeries(  # the 5 input days before the date's next day, and every later day
        series.dates[KNOWN - 5 :],
        series.values[KNOWN - 5 :],
        series.columns,
        series.lines[KNOWN - 5 :],
        "x",
    )
    path = write_csv(later, tmp_path / "later.csv")
    own = json.loads(
        CliRunner().invoke(app, ["evaluate", str(run_dir), "--src", str(path), "--json"]).stdout
    )
    assert own["count"] == split["count"]
    for measure in ("mape", "r2"):
        assert own["metrics"][measure] == pytest.approx(split["metrics"][measure], rel=1e-6)
        assert own["baselines"]["persistence"][measure] == pytest.approx(
            split["baselines"]["persistence"][measure], rel=1e-6
        )
    assert not any("on or before" in note for note in own["notes"])  # all out of sample


def test_shipped_configs_forecast_the_change_unless_named_as_the_papers():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "configs"
    stocks = [p for p in sorted(root.glob("*.yaml")) if "task: stocks" in p.read_text()]
    assert {p.name for p in stocks} >= {"amzn-alpha-t-rim.yaml", "amzn-alpha-t-rim-paper.yaml"}
    for path in stocks:
        want = "level" if path.stem.endswith("-paper") else "change"
        assert load_config(path).model.predict == want, path.name
