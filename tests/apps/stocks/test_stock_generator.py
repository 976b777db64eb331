"""The generated stocks follow their documented model: sentiment explains the returns in the
news regimes only, with the given strength and lag, and the series round-trips through CSV."""

from __future__ import annotations

import numpy as np
import pytest

from attnkit.apps.stocks.generator import GeneratedStocks, generate_stocks, write_csv
from attnkit.apps.stocks.series import read_series


def returns_of(g: GeneratedStocks, start_price: float = 100.0) -> np.ndarray:
    """``(T,)`` the log returns r_t (r_0 from the start price)."""
    return np.diff(np.log(np.r_[start_price, g.series.column("close")]))


def correlations(g: GeneratedStocks) -> tuple[float, float]:
    """corr(r_t, s_{t-lag}) on the days that matter and on the others (t >= lag)."""
    lag, r, s = g.lag, returns_of(g), g.series.column("sentiment")
    r, s_lag, m = r[lag:], s[: len(s) - lag], g.matters[lag:]
    return np.corrcoef(r[m], s_lag[m])[0, 1], np.corrcoef(r[~m], s_lag[~m])[0, 1]


def test_shapes_dates_and_columns():
    g = generate_stocks(300, seed=1)
    s = g.series
    assert len(s) == 300 and s.values.shape == (300, 3) and s.values.dtype == np.float64
    assert s.columns == ["close", "sentiment", "articles"] and s.source == "generated"
    assert g.matters.shape == (300,) and g.matters.dtype == bool
    assert s.lines.shape == (300,) and not s.lines.any()
    assert g.strength == 0.8 and g.lag == 1 and not g.matters[0]
    assert s.dates.dtype == np.dtype("datetime64[D]")
    assert [str(d) for d in s.dates[:4]] == ["2015-01-02", "2015-01-05", "2015-01-06", "2015-01-07"]
    assert np.is_busday(s.dates).all() and np.all(np.diff(s.dates.astype(np.int64)) > 0)
    assert np.isfinite(s.values).all() and (s.column("close") > 0).all()


def test_deterministic_in_the_seed():
    a, b, c = generate_stocks(500, seed=7), generate_stocks(500, seed=7), generate_stocks(500)
    np.testing.assert_array_equal(a.series.values, b.series.values)
    np.testing.assert_array_equal(a.matters, b.matters)
    assert not np.array_equal(a.series.values, c.series.values)


@pytest.mark.parametrize("share", [0.2, 0.5, 0.8])
def test_share_of_days_in_regimes(share):
    for seed in range(3):
        g = generate_stocks(20_000, seed=seed, share=share, regime_days=20)
        assert abs(g.matters.mean() - share) < 0.05, (seed, g.matters.mean())
    g = generate_stocks(20_000, seed=0, share=share)  # regime_days 60
    assert abs(g.matters.mean() - share) < 0.08


def test_regime_lengths_have_mean_regime_days():
    m = generate_stocks(20_000, seed=2, regime_days=30, share=0.5).matters
    change = np.flatnonzero(np.diff(m.astype(np.int8))) + 1
    runs = np.split(m, change)[1:-1]  # whole runs only
    regimes = [len(r) for r in runs if r[0]]
    assert abs(np.mean(regimes) - 30) < 5, np.mean(regimes)


@pytest.mark.parametrize(("strength", "lag"), [(0.8, 1), (0.5, 3), (0.0, 1), (1.0, 2)])
def test_sentiment_explains_returns_in_regimes_only(strength, lag):
    g = generate_stocks(20_000, seed=3, strength=strength, lag=lag)
    inside, outside = correlations(g)
    assert abs(inside - strength) < 0.05, inside
    assert abs(outside) < 0.05, outside
    assert not g.matters[:lag].any()
    if strength > 0:  # the wrong lag explains nothing
        r, s = returns_of(g)[lag + 1 :], g.series.column("sentiment")
        m = g.matters[lag + 1 :]
        wrong = np.corrcoef(r[m], s[: len(s) - lag - 1][m])[0, 1]
        assert abs(wrong - strength * 0.5) < 0.05  # persistence 0.5: one step further back


@pytest.mark.parametrize("volatility", [0.01, 0.03])
def test_returns_have_the_volatility_inside_and_outside(volatility):
    g = generate_stocks(20_000, seed=4, volatility=volatility)
    r = returns_of(g)
    assert abs(r.std() / volatility - 1) < 0.05
    assert abs(r[g.matters].std() / volatility - 1) < 0.05
    assert abs(r[~g.matters].std() / volatility - 1) < 0.05
    assert abs(r.mean()) < 0.05 * volatility


def test_sentiment_is_a_unit_variance_ar1():
    s = generate_stocks(20_000, seed=5, persistence=0.7).series.column("sentiment")
    assert abs(s.mean()) < 0.1 and abs(s.std() - 1) < 0.05
    assert abs(np.corrcoef(s[1:], s[:-1])[0, 1] - 0.7) < 0.03


def test_share_zero_and_one_and_start_price():
    assert not generate_stocks(200, share=0.0).matters.any()
    g = generate_stocks(200, share=1.0, lag=2, start_price=5.0)
    assert g.matters[2:].all() and not g.matters[:2].any()
    assert abs(g.series.column("close")[0] / 5.0 - 1) < 0.1


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"days": 10, "lag": 1}, "days"),
        ({"days": 20.0}, "days"),
        ({"lag": -1}, "lag"),
        ({"strength": 1.01}, "strength"),
        ({"strength": -0.1}, "strength"),
        ({"share": 1.5}, "share"),
        ({"share": float("nan")}, "share"),
        ({"volatility": 0.0}, "volatility"),
        ({"volatility": float("inf")}, "volatility"),
        ({"persistence": 1.0}, "persistence"),
        ({"persistence": -1.0}, "persistence"),
        ({"regime_days": 0.5}, "regime_days"),
        ({"start_price": 0.0}, "start_price"),
    ],
)
def test_arguments_are_checked(options, name):
    with pytest.raises(ValueError, match=rf"generate_stocks: {name} must be"):
        generate_stocks(**options)


def test_smallest_series_is_allowed():
    assert len(generate_stocks(13, lag=3).series) == 13


def test_round_trip_through_csv(tmp_path):
    g = generate_stocks(400, seed=6)
    path = write_csv(g.series, tmp_path / "stocks.csv")
    assert path.read_text().splitlines()[0] == "date,close,sentiment,articles"
    back = read_series(path, columns=g.series.columns)
    np.testing.assert_array_equal(back.dates, g.series.dates)
    assert np.array_equal(back.values, g.series.values)  # exactly: full precision
    assert back.columns == g.series.columns
    np.testing.assert_array_equal(back.lines, np.arange(2, 402))
    with pytest.raises(ValueError, match="'date'"):
        write_csv(
            type(g.series)(
                g.series.dates, g.series.values[:, :2], ["date", "x"], g.series.lines, "generated"
            ),
            tmp_path / "x.csv",
        )


def test_news_volume_marks_the_days_whose_sentiment_drives_the_next_return():
    g = generate_stocks(20_000, seed=7, lag=2, busy_articles=5.0, quiet_articles=0.5)
    articles = g.series.column("articles")
    drives = np.zeros(20_000, dtype=bool)
    drives[:-2] = g.matters[2:]  # day t's sentiment drives the return of day t + lag
    assert abs(articles[drives].mean() - 5.0) < 0.1 and abs(articles[~drives].mean() - 0.5) < 0.05
    assert (articles == np.round(articles)).all() and articles.min() >= 0


def test_news_volume_leaves_close_and_sentiment_as_they_were():
    a = generate_stocks(500, seed=8).series.values
    b = generate_stocks(500, seed=8, busy_articles=9.0).series.values
    np.testing.assert_array_equal(a[:, :2], b[:, :2])
    assert not np.array_equal(a[:, 2], b[:, 2])
