"""Forecast metrics against independent references.

MAPE and R² against hand-computed values and scikit-learn; the Diebold-Mariano test against
scipy's one-sample t-test (h = 1) and statsmodels' HAC variance with a uniform kernel (h > 1);
the Nadeau-Bengio corrected resampled t-test against the formula in plain Python and scipy.
"""

import math
import statistics

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.metrics import mean_absolute_percentage_error, r2_score

from attnkit.metrics.forecast import (
    DMTest,
    TTest,
    corrected_resampled_ttest,
    diebold_mariano,
    mape,
    r2,
)


def _hln(n: int, h: int) -> float:
    """Harvey, Leybourne & Newbold 1997 factor, written out independently of the module."""
    return math.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)


def _ma_errors(rng: np.random.Generator, n: int, h: int) -> np.ndarray:
    """MA(h - 1) errors, as an efficient h-step-ahead forecast makes."""
    shocks = rng.normal(size=n + h - 1)
    return np.convolve(shocks, np.ones(h), mode="valid")


# ---------------------------------------------------------------- MAPE and R²


def test_mape_by_hand():
    # |1-2|/1 = 1, |2-2|/2 = 0, |4-3|/4 = 0.25, |-5-(-4)|/5 = 0.2 -> mean 0.3625
    assert mape([1, 2, 4, -5], [2, 2, 3, -4]) == pytest.approx(36.25, rel=1e-15)
    assert isinstance(mape([1.0, 2.0], [1.0, 1.0]), float)


def test_mape_columns_by_hand():
    y = np.array([[1.0, 10.0], [2.0, 20.0]])
    yhat = np.array([[1.5, 10.0], [1.0, 25.0]])
    # column 0: 0.5/1, 1/2 -> 50 %; column 1: 0, 5/20 -> 12.5 %
    np.testing.assert_allclose(mape(y, yhat, axis=0), [50.0, 12.5], rtol=1e-15)
    np.testing.assert_allclose(mape(y, yhat, axis=1), [25.0, 37.5], rtol=1e-15)
    assert mape(y, yhat, axis=None) == pytest.approx(31.25, rel=1e-15)


def test_mape_matches_sklearn():
    rng = np.random.default_rng(1)
    y = rng.uniform(0.5, 3.0, size=(40, 3)) * rng.choice([-1, 1], size=(40, 3))
    yhat = y + rng.normal(scale=0.4, size=y.shape)
    expected = 100 * mean_absolute_percentage_error(y, yhat, multioutput="raw_values")
    np.testing.assert_allclose(mape(y, yhat), expected, rtol=1e-12)
    assert mape(y[:, 0], yhat[:, 0]) == pytest.approx(
        100 * mean_absolute_percentage_error(y[:, 0], yhat[:, 0]), rel=1e-12
    )


def test_r2_by_hand():
    # mean 2.5, SS_tot = 2.25 + 0.25 + 0.25 + 2.25 = 5; SS_res = 0.25 + 0 + 0.25 + 1 = 1.5
    assert r2([1, 2, 3, 4], [1.5, 2, 2.5, 5]) == pytest.approx(1 - 1.5 / 5, rel=1e-15)
    assert r2([1, 2, 3], [1, 2, 3]) == 1.0
    # the constant mean scores 0, anything worse is negative
    assert r2([1, 2, 3], [2, 2, 2]) == pytest.approx(0.0, abs=1e-15)
    assert r2([1, 2, 3], [3, 2, 1]) == pytest.approx(1 - 8 / 2, rel=1e-15)


def test_r2_matches_sklearn_per_column():
    rng = np.random.default_rng(2)
    y = rng.normal(size=(30, 4)) * [1, 5, 0.1, 3] + [0, 10, -2, 100]
    yhat = y + rng.normal(scale=0.7, size=y.shape)
    expected = r2_score(y, yhat, multioutput="raw_values")
    np.testing.assert_allclose(r2(y, yhat, axis=0), expected, rtol=1e-12)
    np.testing.assert_allclose(r2(y.T, yhat.T, axis=1), expected, rtol=1e-12)
    assert r2(y[:, 1], yhat[:, 1]) == pytest.approx(r2_score(y[:, 1], yhat[:, 1]), rel=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mape([1, 2, 3], [1, 2]), r"shape \(3,\) but y_pred has shape \(2,\)"),
        (lambda: mape([], []), "empty"),
        (lambda: mape([1, 0, 2, 0], [1, 1, 1, 1]), "2 zero value.* first at index 1"),
        (lambda: mape([[1, 2], [0, 3]], [[1, 2], [1, 3]]), r"first at index \(1, 0\)"),
        (lambda: r2([1, 2], [1, 2, 3]), "shape"),
        (lambda: r2([1.0], [2.0]), "at least 2 values.* got 1"),
        (lambda: r2([3, 3, 3], [1, 2, 3]), "constant y_true"),
        (lambda: r2([[1, 5], [2, 5]], [[1, 5], [2, 5]]), "constant y_true"),
    ],
)
def test_mape_r2_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- Diebold-Mariano


@pytest.mark.parametrize(("n", "power"), [(5, 2), (40, 2), (120, 1), (60, 1.5)])
def test_dm_horizon_one_is_the_one_sample_t_test(n, power):
    # DM = mean(d) / sqrt(gamma_0 / n) with gamma_0 = var(d, ddof=0); the HLN factor for h = 1 is
    # sqrt((n - 1) / n), which turns ddof=0 into ddof=1: exactly scipy's one-sample t statistic.
    rng = np.random.default_rng(n)
    ea, eb = rng.normal(size=n), rng.normal(scale=1.2, size=n)
    d = np.abs(ea) ** power - np.abs(eb) ** power
    reference = stats.ttest_1samp(d, 0.0)
    result = diebold_mariano(ea, eb, horizon=1, power=power)
    assert isinstance(result, DMTest)
    assert result.statistic == pytest.approx(reference.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-10)
    assert result.mean_difference == pytest.approx(float(d.mean()), rel=1e-14)
    assert (result.n, result.horizon) == (n, 1)


def test_dm_default_loss_is_squared_error():
    ea, eb = [0.5, -1.0, 2.0, 0.1, -0.3], [1.0, 1.0, -1.5, 0.2, 0.4]
    d = np.square(ea) - np.square(eb)
    assert diebold_mariano(ea, eb).statistic == pytest.approx(
        stats.ttest_1samp(d, 0.0).statistic, rel=1e-12
    )


@pytest.mark.parametrize(("n", "h"), [(30, 2), (80, 3), (200, 6)])
def test_dm_multi_step_matches_statsmodels_hac(n, h):
    rng = np.random.default_rng(100 + h)
    ea, eb = _ma_errors(rng, n, h), 1.1 * _ma_errors(rng, n, h)
    d = ea**2 - eb**2
    # statsmodels: HAC variance of the mean of d (regression on a constant), uniform kernel up
    # to lag h - 1, no small-sample df correction: (gamma_0 + 2 sum gamma_k) / n.
    fit = sm.OLS(d, np.ones(n)).fit(
        cov_type="HAC", cov_kwds={"maxlags": h - 1, "kernel": "uniform", "use_correction": False}
    )
    assert fit.bse[0] ** 2 > 0  # the truncated estimate is positive here, no fallback
    expected = d.mean() / fit.bse[0] * _hln(n, h)
    result = diebold_mariano(ea, eb, horizon=h)
    assert result.statistic == pytest.approx(expected, rel=1e-10)
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(expected), n - 1), rel=1e-9)
    assert result.horizon == h


def test_dm_negative_long_run_variance_falls_back_to_gamma_0():
    # alternating losses: gamma_1 is close to -gamma_0, so gamma_0 + 2 gamma_1 < 0 for h = 2
    n, h = 20, 2
    ea = np.where(np.arange(n) % 2 == 0, 2.0, 0.5)
    ea[0] = 2.2  # mean of d not exactly 0
    eb = np.ones(n)
    d = ea**2 - eb**2
    c = d - d.mean()
    gamma0, gamma1 = c @ c / n, c[1:] @ c[:-1] / n
    assert gamma0 + 2 * gamma1 < 0
    expected = d.mean() / math.sqrt(gamma0 / n) * _hln(n, h)
    assert diebold_mariano(ea, eb, horizon=h).statistic == pytest.approx(expected, rel=1e-12)


def test_dm_sign_and_power():
    rng = np.random.default_rng(7)
    n = 100
    small, large = rng.normal(scale=0.5, size=n), rng.normal(scale=2.0, size=n)
    a_better = diebold_mariano(small, large, horizon=2)
    assert a_better.statistic < -3 and a_better.p_value < 1e-3
    assert a_better.mean_difference < 0
    b_better = diebold_mariano(large, small, horizon=2)
    assert b_better.statistic == pytest.approx(-a_better.statistic, rel=1e-12)
    assert b_better.p_value == pytest.approx(a_better.p_value, rel=1e-12)
    # same forecasts, no evidence either way
    same = diebold_mariano(rng.normal(size=n), rng.normal(size=n))
    assert same.p_value > 0.01


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1, 2, 3], [1, 2]), {}, "3 values but errors_b has 2"),
        (([1, 2], [2, 1]), {}, "at least 3 forecast errors, got 2"),
        (([1, 2, 3, 4], [4, 3, 2, 1]), {"horizon": 0}, "horizon must be an integer >= 1"),
        (([1, 2, 3, 4], [4, 3, 2, 1]), {"horizon": 4}, "horizon 4 must be smaller"),
        (([1, 2, 3, 4], [1, -2, 3, -4]), {}, "losses are identical"),
        (([2, 2, 2, 2], [1, 1, 1, 1]), {}, "constant.* variance is 0"),
    ],
)
def test_dm_errors(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        diebold_mariano(*args, **kwargs)


# ---------------------------------------------------------------- Nadeau-Bengio


def test_nadeau_bengio_by_hand():
    d = [0.1, 0.3, 0.2, 0.4, 0.0]
    n_train, n_test = 800, 200
    j = len(d)
    expected_t = statistics.fmean(d) / math.sqrt(
        (1 / j + n_test / n_train) * statistics.variance(d)
    )
    result = corrected_resampled_ttest(d, n_train, n_test)
    assert isinstance(result, TTest)
    assert result.statistic == pytest.approx(expected_t, rel=1e-12)
    # mean 0.2, sample variance 0.025: t = 0.2 / sqrt(0.45 * 0.025) = 1.8856...
    assert result.statistic == pytest.approx(0.2 / math.sqrt(0.45 * 0.025), rel=1e-12)
    assert result.p_value == pytest.approx(2 * stats.t.sf(expected_t, j - 1), rel=1e-12)
    assert (result.mean, result.folds) == (pytest.approx(0.2), 5)


def test_nadeau_bengio_without_overlap_is_the_one_sample_t_test():
    rng = np.random.default_rng(3)
    d = rng.normal(loc=0.02, scale=0.05, size=10)
    reference = stats.ttest_1samp(d, 0.0)
    tiny = corrected_resampled_ttest(d, n_train=10**12, n_test=1)
    assert tiny.statistic == pytest.approx(reference.statistic, rel=1e-9)
    assert tiny.p_value == pytest.approx(reference.pvalue, rel=1e-8)


def test_nadeau_bengio_correction_shrinks_the_statistic():
    rng = np.random.default_rng(4)
    d = rng.normal(loc=0.03, scale=0.02, size=15)
    naive = stats.ttest_1samp(d, 0.0)
    corrected = corrected_resampled_ttest(d, n_train=900, n_test=100)
    assert 0 < corrected.statistic < naive.statistic
    assert corrected.p_value > naive.pvalue
    # the ratio is exactly sqrt((1/J) / (1/J + n_test/n_train))
    ratio = math.sqrt((1 / 15) / (1 / 15 + 100 / 900))
    assert corrected.statistic / naive.statistic == pytest.approx(ratio, rel=1e-12)
    assert corrected_resampled_ttest(-d, 900, 100).statistic == pytest.approx(
        -corrected.statistic, rel=1e-12
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0.1], 800, 200), "at least 2 folds, got 1"),
        (([0.1, 0.2], 0, 200), "n_train and n_test must be positive"),
        (([0.1, 0.2], 800, -1), "n_train and n_test must be positive"),
        (([0.1, 0.1, 0.1], 800, 200), "zero variance"),
    ],
)
def test_nadeau_bengio_errors(args, message):
    with pytest.raises(ValueError, match=message):
        corrected_resampled_ttest(*args)
