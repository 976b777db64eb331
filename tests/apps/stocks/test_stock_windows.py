"""The paper's preprocessing (windows, log and z-score with training statistics only) and the
baselines (persistence; ARIMA against statsmodels' own refit-free forecasts)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnkit.apps.stocks.baselines import arima_forecasts, fit_arima, persistence
from attnkit.apps.stocks.config import StockDataConfig
from attnkit.apps.stocks.generator import generate_stocks
from attnkit.apps.stocks.series import PriceSeries, StockDataError
from attnkit.apps.stocks.sets import sets_of
from attnkit.apps.stocks.windows import cut_windows, log_prices, make_splits, split_days


def _series(values: np.ndarray) -> PriceSeries:
    n = len(values)
    dates = np.busday_offset("2015-01-02", np.arange(n), roll="forward")
    return PriceSeries(
        dates, values, ["close", "sentiment"][: values.shape[1]], np.arange(2, n + 2), "prices.csv"
    )


def test_windows_match_shifted_columns():
    z = np.random.default_rng(0).normal(size=(40, 2))
    w = cut_windows(z, 0, 40, window=5, horizon=3)
    frame = pd.DataFrame(z)
    for n, last in enumerate(w.last):  # inputs: lags 4..0 of day `last`; targets: leads 1..3
        lags = np.stack([frame.shift(lag).iloc[last].to_numpy() for lag in range(4, -1, -1)])
        leads = [frame[0].shift(-lead).iloc[last] for lead in (1, 2, 3)]
        np.testing.assert_array_equal(w.x[n], lags)
        np.testing.assert_array_equal(w.y[n], leads)
    assert w.last[0] == 4 and w.last[-1] == 36 and len(w) == 33  # no target past the end


def test_windows_stay_inside_their_split():
    z = np.arange(100.0)[:, None]
    w = cut_windows(z, 50, 70, window=5, horizon=2)
    assert w.x.min() >= 50 and w.y.max() <= 69


def test_scaling_uses_the_training_days_only():
    rng = np.random.default_rng(1)
    values = np.column_stack(
        [100 * np.exp(np.cumsum(rng.normal(0, 0.01, 300))), rng.normal(size=300)]
    )
    scaling, windows = make_splits(_series(values), (0.7, 0.2), 5, 2)
    n_train, _ = split_days(300, (0.7, 0.2))
    logged = np.column_stack([np.log(values[:, 0]), values[:, 1]])
    np.testing.assert_allclose(scaling.mean, logged[:n_train].mean(0))
    np.testing.assert_allclose(scaling.std, logged[:n_train].std(0, ddof=1))
    changed = values.copy()
    changed[n_train:] *= 3  # later days never move the statistics
    again, _ = make_splits(_series(changed), (0.7, 0.2), 5, 2)
    np.testing.assert_array_equal(again.mean, scaling.mean)
    test = windows["test"]  # back to prices exactly
    np.testing.assert_allclose(scaling.prices(test.y), values[test.last[:, None] + [1, 2], 0])


@pytest.mark.parametrize(
    ("n", "shares", "counts"),
    [
        (1500, (0.7, 0.2), (1050, 300, 150)),  # 0.7 + 0.2 == 0.8999999999999999 in floats
        (90, (0.7, 0.2), (63, 18, 9)),  # 90 * 0.7 == 62.99999999999999
        (300, (0.7, 0.2), (210, 60, 30)),
        (1258, (0.7, 0.2), (880, 252, 126)),  # AMZN in the paper's file
        (1130, (0.7, 0.2), (791, 226, 113)),  # TMO's third rolling origin
        (1001, (0.6, 0.3), (600, 300, 101)),
        (100, (0.1, 0.2), (10, 20, 70)),
        (7, (0.5, 0.25), (3, 2, 2)),  # boundaries 3.5 and 5.25: the days before each
    ],
)
def test_split_days_gives_all_three_counts(n, shares, counts):
    n_train, n_valid = split_days(n, shares)
    assert (n_train, n_valid, n - n_train - n_valid) == counts


def test_split_days_matches_integer_percentages():
    for p, q in [(70, 20), (60, 20), (80, 10), (50, 30), (10, 20), (33, 33), (70, 10)]:
        for n in range(1, 2001):
            expected = (n * p // 100, n * (p + q) // 100 - n * p // 100)
            assert split_days(n, (p / 100, q / 100)) == expected, (n, p, q)


def test_a_price_that_is_not_positive_names_its_line():
    values = np.array([[10.0, 0.1], [11.0, 0.2], [0.0, 0.3]])
    with pytest.raises(StockDataError, match=r"prices.csv, line 4, column 'close'.*not positive"):
        log_prices(_series(values))


def test_persistence_repeats_the_last_price():
    x = np.random.default_rng(2).normal(size=(4, 6, 2))
    assert (persistence(x, 3) == x[:, -1, :1]).all() and persistence(x, 3).shape == (4, 3)


def test_arima_forecasts_equal_refiltering_each_origin():
    y = np.log(generate_stocks(260, seed=3).series.values[:, 0])
    fit = fit_arima(y[:200], max_p=1, max_q=1)
    lasts = np.array([199, 210, 230, 250])
    ours = arima_forecasts(fit, y, lasts, 4)
    reference = np.stack([fit.results.apply(y[: last + 1]).forecast(4) for last in lasts])
    np.testing.assert_allclose(ours, reference, rtol=1e-10)


def test_a_fold_is_the_series_cut_at_its_end():
    made = generate_stocks(500, seed=4)
    cfg = StockDataConfig(window=5, horizon=2)
    whole, fold = sets_of(made.series, cfg, made.matters), sets_of(made.series, cfg, days=400)
    assert len(fold.series) == 400 and fold.n_train == 280 and whole.n_train == 350
    assert fold.windows["test"].last.max() == 400 - 2 - 1
