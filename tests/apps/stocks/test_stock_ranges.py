"""Inputs outside the training range (issue 35, item 3): the scaling keeps each feature's
training range in z units, and a window beyond it gives one line per feature naming the
feature and how far; runs written without the range give none and do not fail."""

from __future__ import annotations

import numpy as np

from attnkit.apps.stocks.config import StockDataConfig
from attnkit.apps.stocks.ranges import feature_labels, range_notes
from attnkit.apps.stocks.windows import Scaling


def _scaling() -> Scaling:
    rng = np.random.default_rng(0)
    logged = np.column_stack([np.log(100 + np.cumsum(rng.normal(0, 1, 200))), rng.normal(size=200)])
    return Scaling.fit(logged)


def test_fit_keeps_the_training_range_in_z_units_and_writes_it():
    rng = np.random.default_rng(1)
    logged = rng.normal(size=(50, 2)) * [0.1, 3.0] + [4.0, -1.0]
    scaling = Scaling.fit(logged)
    z = scaling.transform(logged)
    np.testing.assert_array_equal(scaling.low, z.min(axis=0))
    np.testing.assert_array_equal(scaling.high, z.max(axis=0))
    again = Scaling.from_dict(scaling.to_dict())
    np.testing.assert_array_equal(again.low, scaling.low)
    np.testing.assert_array_equal(again.high, scaling.high)


def test_inside_the_range_gives_no_note():
    scaling = _scaling()
    x = np.stack([scaling.low, scaling.high, (scaling.low + scaling.high) / 2])[None]  # (1, 3, 2)
    assert range_notes(scaling, x, ["close", "sentiment"], level=True) == []


def test_prices_above_the_range_name_the_feature_and_how_far():
    scaling = _scaling()
    x = np.zeros((4, 5, 2))  # (N, T, F)
    x[1:, -1, 0] = scaling.high[0] + [0.5, 1.0, 1.1]  # three windows end above the range
    (note,) = range_notes(scaling, x, ["AMZN close", "sentiment"], level=True)
    top, high = scaling.high[0] + 1.1, scaling.high[0]
    assert note.startswith(f"AMZN close: inputs reach z = {top:.2f}, price ")
    assert f"above the training range (max {high:.2f}, price " in note
    assert "in 3 of 4 windows" in note and note.endswith("level forecasts are extrapolation")
    assert f"price {float(scaling.prices(top)):.4g}," in note


def test_each_feature_once_with_both_sides_said():
    scaling = _scaling()
    x = np.zeros((2, 3, 2))
    x[0, :, 1] = scaling.low[1] - 2.0
    x[1, 0, 1] = scaling.high[1] + 0.25
    x[1, 1, 1] = scaling.high[1] + 0.5
    (note,) = range_notes(scaling, x, ["close", "sentiment"], level=True)
    assert note.startswith(f"sentiment: inputs reach z = {scaling.high[1] + 0.5:.2f}, above")
    assert f"z = {scaling.low[1] - 2.0:.2f}, below the training range (min" in note
    assert "price" not in note and note.endswith("forecasts from these inputs are extrapolation")


def test_a_run_without_the_range_gives_no_note_and_no_error():
    old = Scaling.from_dict({"mean": [4.0, 0.0], "std": [0.1, 1.0]})
    assert old.low is None and old.high is None and "low" not in old.to_dict()
    assert range_notes(old, np.full((2, 3, 2), 50.0), ["close", "sentiment"], level=True) == []


def test_labels_carry_the_ticker_where_the_run_has_one():
    paper = StockDataConfig(source="paper", ticker="TMO", features=["close", "conv_filter"])
    assert feature_labels(paper) == ["TMO close", "TMO conv_filter"]
    csv = StockDataConfig(source="csv", path="p.csv", features=["close"], where={"ticker": "AMZN"})
    assert feature_labels(csv) == ["AMZN close"]
    assert feature_labels(StockDataConfig()) == ["close", "sentiment", "articles"]
