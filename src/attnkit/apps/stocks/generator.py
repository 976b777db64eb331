"""Generated stock prices whose dependence on news sentiment is known, for tests and the demo.

The model of :func:`generate_stocks`, for days ``t = 0 .. T-1``:

- sentiment ``s_t`` is a zero-mean AR(1) with unit stationary variance:
  ``s_0 ~ N(0, 1)``, ``s_t = phi * s_{t-1} + sqrt(1 - phi^2) * eta_t`` (``phi = persistence``);
- news regimes alternate with quiet spells. A regime lasts a geometric number of days
  (``>= 1``, mean ``regime_days``); a quiet spell lasts a geometric number of days (``>= 0``,
  mean ``regime_days * (1 - share) / share``), so that on average a fraction ``share`` of the
  days are in a regime (``m_t = 1``). Day 0 is in a regime with probability ``share``; the
  first ``lag`` days, which have no lagged sentiment in the series, never are;
- the log return is ``r_t = m_t * strength * volatility * s_{t-lag}
  + sqrt(1 - m_t * strength^2) * volatility * eps_t`` with ``eps_t ~ N(0, 1)``: the returns
  have standard deviation ``volatility`` inside and outside regimes, and inside, lagged
  sentiment explains a fraction ``strength^2`` of their variance (correlation ``strength``);
- the close is ``price_t = start_price * exp(r_0 + ... + r_t)``;
- the news volume ``articles_t`` (articles published on day ``t``) is Poisson with mean
  ``busy_articles`` when day ``t``'s sentiment drives the next return (``m_{t+lag} = 1``) and
  ``quiet_articles`` otherwise: an observable, noisy sign of the regime, as a real sentiment
  feed counts its articles (the paper's ``article_count``). It is drawn after everything else,
  so the close and sentiment do not depend on it.

Dates are business days (NumPy's Monday-to-Friday calendar, no holidays) from 2015-01-02.
Everything is drawn from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnkit.apps.stocks.series import PriceSeries, write_csv

__all__ = ["START_DATE", "GeneratedStocks", "generate_stocks", "write_csv"]

START_DATE = "2015-01-02"


@dataclass
class GeneratedStocks:
    """A generated series and the truth about it.

    Attributes:
        series: columns ``["close", "sentiment", "articles"]``, ``T`` business days from
            2015-01-02.
        matters: ``(T,)`` bool, the days whose return follows the lagged sentiment.
        strength: the correlation of return and lagged sentiment on those days.
        lag: how many days the sentiment leads the return.
    """

    series: PriceSeries
    matters: np.ndarray
    strength: float
    lag: int


def _check(days, lag, strength, share, volatility, persistence, regime_days, start_price):
    """A ValueError naming the first argument out of range."""
    rules = [
        ("lag", isinstance(lag, int) and lag >= 0, "an int >= 0"),
        ("days", isinstance(days, int) and days >= lag + 10, f"an int >= lag + 10 = {lag + 10}"),
        ("strength", 0 <= strength <= 1, "in [0, 1]"),
        ("share", 0 <= share <= 1, "in [0, 1]"),
        ("volatility", 0 < volatility < math.inf, "finite and > 0"),
        ("persistence", abs(persistence) < 1, "in (-1, 1)"),
        ("regime_days", 1 <= regime_days < math.inf, "finite and >= 1"),
        ("start_price", 0 < start_price < math.inf, "finite and > 0"),
    ]
    values = {
        "lag": lag,
        "days": days,
        "strength": strength,
        "share": share,
        "volatility": volatility,
        "persistence": persistence,
        "regime_days": regime_days,
        "start_price": start_price,
    }
    for name, ok, what in rules:
        if not ok:
            raise ValueError(f"generate_stocks: {name} must be {what}, got {values[name]!r}")


def _sentiment(rng: np.random.Generator, days: int, persistence: float) -> np.ndarray:
    """``(days,)`` AR(1) with coefficient ``persistence`` and unit stationary variance."""
    noise = rng.standard_normal(days)
    scale = math.sqrt(1.0 - persistence**2)
    out = np.empty(days)
    out[0] = noise[0]
    for t in range(1, days):
        out[t] = persistence * out[t - 1] + scale * noise[t]
    return out


def _regimes(rng: np.random.Generator, days: int, regime_days: float, share: float) -> np.ndarray:
    """``(days,)`` bool: alternating regimes (geometric >= 1 days, mean ``regime_days``) and
    quiet spells (geometric >= 0 days, mean ``regime_days * (1 - share) / share``)."""
    if share in (0, 1):
        return np.full(days, bool(share))
    p_regime = 1.0 / regime_days
    p_quiet = share / (share + regime_days * (1.0 - share))  # mean (1 - p) / p as above
    out = np.zeros(days, dtype=bool)
    t, inside = 0, bool(rng.random() < share)
    while t < days:
        n = rng.geometric(p_regime) if inside else rng.geometric(p_quiet) - 1
        out[t : t + n] = inside
        t, inside = t + n, not inside
    return out


def _check_articles(busy: float, quiet: float) -> None:
    if not (0 <= busy < math.inf and 0 <= quiet < math.inf):
        raise ValueError(
            "generate_stocks: busy_articles and quiet_articles must be finite and "
            f">= 0, got {busy!r}, {quiet!r}"
        )


def generate_stocks(
    days: int = 1500,
    *,
    seed: int = 0,
    strength: float = 0.8,
    lag: int = 1,
    volatility: float = 0.01,
    persistence: float = 0.5,
    regime_days: float = 60,
    share: float = 0.5,
    start_price: float = 100.0,
    busy_articles: float = 4.0,
    quiet_articles: float = 1.0,
) -> GeneratedStocks:
    """``days`` business days of close and sentiment by the model in this module's docstring.

    Args:
        days: ``T``, at least ``lag + 10``.
        seed: the seed of the NumPy generator; the same seed gives the same series.
        strength: in ``[0, 1]``, the correlation of ``r_t`` and ``s_{t-lag}`` inside regimes.
        lag: ``>= 0`` days by which sentiment leads the return.
        volatility: ``> 0``, the standard deviation of the daily log return.
        persistence: in ``(-1, 1)``, the AR(1) coefficient of the sentiment.
        regime_days: ``>= 1``, the mean length of a news regime in days.
        share: in ``[0, 1]``, the expected fraction of days in news regimes.
        start_price: ``> 0``, the price before day 0.
        busy_articles, quiet_articles: ``>= 0``, the mean news volume on days whose sentiment
            drives the next return, and on the others.

    Returns:
        :class:`GeneratedStocks`: ``series.values`` ``(T, 3)`` (close, sentiment, articles),
        ``matters`` ``(T,)`` bool.
    """
    _check(days, lag, strength, share, volatility, persistence, regime_days, start_price)
    rng = np.random.default_rng(seed)
    sentiment = _sentiment(rng, days, persistence)
    matters = _regimes(rng, days, regime_days, share)
    matters[:lag] = False
    lagged = np.zeros(days)
    lagged[lag:] = sentiment[: days - lag]
    eps = rng.standard_normal(days)
    m = matters.astype(np.float64)
    returns = volatility * (m * strength * lagged + np.sqrt(1.0 - m * strength**2) * eps)
    close = start_price * np.exp(np.cumsum(returns))
    _check_articles(busy_articles, quiet_articles)
    drives = np.zeros(days, dtype=bool)  # day t's sentiment drives r_{t+lag}
    drives[: days - lag] = matters[lag:]
    articles = rng.poisson(np.where(drives, busy_articles, quiet_articles)).astype(np.float64)
    dates = np.busday_offset(START_DATE, np.arange(days), roll="forward").astype("datetime64[D]")
    series = PriceSeries(
        dates=dates,
        values=np.stack([close, sentiment, articles], axis=1),
        columns=["close", "sentiment", "articles"],
        lines=np.zeros(days, dtype=np.int64),
        source="generated",
    )
    return GeneratedStocks(series=series, matters=matters, strength=float(strength), lag=lag)
