"""The NAB score on hand-built cases whose value follows from the paper's formula (Lavin &
Ahmad 2015, eq. (1): sigma(y) = 2 / (1 + e^{5y}) - 1) and NAB's rules, and the windowed-Gaussian
detector against a literal transcription of NAB's loop."""

import math

import numpy as np
import pytest

from attnkit.apps.anomaly.baselines import windowed_gaussian
from attnkit.apps.anomaly.nab import (
    PROFILES,
    eventwise_scores,
    nab_score,
    optimise_threshold,
    pointwise_scores,
    probationary_length,
    scaled_sigmoid,
    score_file,
)


def sigma(y: float) -> float:
    return -1.0 if y >= 3 else 2.0 / (1.0 + math.exp(5.0 * y)) - 1.0


T, WINDOW = 1000, (500, 599)  # width 100; probation floor(0.15 * 1000) = 150 rows
STD = PROFILES["standard"]


def flags_at(*rows: int) -> np.ndarray:
    scores = np.zeros(T)
    scores[list(rows)] = 1.0
    return scores


def test_scaled_sigmoid_matches_the_paper():
    assert scaled_sigmoid(-1.0) == pytest.approx(0.98661, abs=1e-5)  # the window's first row
    assert scaled_sigmoid(-0.5) == pytest.approx(0.84828, abs=1e-5)
    assert scaled_sigmoid(0.0) == pytest.approx(0.0)
    assert scaled_sigmoid(1.0) == pytest.approx(-0.98661, abs=1e-5)
    assert scaled_sigmoid(3.0) == -1.0


def test_probationary_period_is_15_percent_capped_at_750_rows():
    assert probationary_length(1000) == 150
    assert probationary_length(4033) == 604
    assert probationary_length(10320) == 750


@pytest.mark.parametrize("row", [500, 549, 599])
def test_a_detection_inside_the_window_earns_the_scaled_sigmoid(row):
    y = -(WINDOW[1] - row + 1) / 100.0
    expected = sigma(y) / sigma(-1.0) * STD.tp
    got = score_file(flags_at(row), [WINDOW], 0.5, STD)
    assert got.score == pytest.approx(expected, rel=1e-12)
    assert (got.tp, got.fn, got.fp) == (1, 0, 0)


def test_only_the_earliest_detection_in_a_window_counts():
    assert score_file(flags_at(520, 530, 590), [WINDOW], 0.5, STD).score == pytest.approx(
        sigma(-80 / 100) / sigma(-1.0)
    )


def test_false_positives_before_and_after_the_window():
    # before the first window: -A_FP; after it: A_FP * sigma((i - right) / (width - 1))
    before = score_file(flags_at(300), [WINDOW], 0.5, STD)
    assert before.score == pytest.approx(-1.0 - STD.fp)  # the window is also missed
    after = score_file(flags_at(500, 650), [WINDOW], 0.5, STD)
    assert after.score == pytest.approx(1.0 + STD.fp * sigma(51 / 99))
    far = score_file(flags_at(500, 999), [WINDOW], 0.5, STD)
    assert far.score == pytest.approx(1.0 - STD.fp)  # y >= 3: a full FP
    assert far.fp == 1


def test_the_probationary_period_does_not_count():
    assert score_file(flags_at(10, 149), [WINDOW], 0.5, STD).score == pytest.approx(-1.0)
    assert score_file(flags_at(150), [WINDOW], 0.5, STD).score == pytest.approx(-1.0 - STD.fp)


@pytest.mark.parametrize("name", list(PROFILES))
def test_profiles_weigh_misses_and_false_alarms(name):
    p = PROFILES[name]
    miss_and_alarm = score_file(flags_at(300), [WINDOW], 0.5, p).score
    assert miss_and_alarm == pytest.approx(-p.fn - p.fp)
    assert (PROFILES["reward_low_FP_rate"].fp, PROFILES["reward_low_FN_rate"].fn) == (0.22, 2.0)


def test_normalisation_null_is_zero_perfect_is_hundred():
    windows = [(200, 249), (600, 699)]
    perfect = np.zeros(T)
    perfect[[200, 600]] = 1.0
    assert nab_score([(perfect, windows)]).score == pytest.approx(100.0)
    assert nab_score([(np.full(T, 0.5), windows)]).score == pytest.approx(0.0)
    # one window found at its start, the other missed, one far false positive:
    half = np.zeros(T)
    half[[200, 999]] = 1.0  # (999 - 699) / 99 >= 3: a full false positive
    for name, p in PROFILES.items():
        raw = p.tp - p.fn - p.fp
        expected = 100 * (raw + 2 * p.fn) / (2 * p.tp + 2 * p.fn)
        assert nab_score([(half, windows)], name).score == pytest.approx(expected)


def test_threshold_optimisation_equals_brute_force():
    rng = np.random.default_rng(0)
    files = []
    for n in (400, 700, 1000):
        scores = np.round(rng.random(n), 2)
        start = int(rng.integers(n // 3, n - 60))
        scores[start + 5] = 0.97
        files.append((scores, [(start, start + 40)]))
    best_t, best = optimise_threshold(files, STD)
    candidates = np.unique(np.concatenate([s for s, _ in files]))
    brute = max(sum(score_file(s, w, t, STD).score for s, w in files) for t in candidates)
    assert best == pytest.approx(max(brute, -3.0))
    assert sum(score_file(s, w, best_t, STD).score for s, w in files) == pytest.approx(best)


def _nab_loop(x, window, step):
    """NAB's WindowedGaussianDetector.handleRecord, transcribed literally."""
    data, buffer, mean, std, out = [], [], 0.0, 1.0, []
    for value in x:
        out.append(1 - 0.5 * math.erfc(abs(value - mean) / std / math.sqrt(2)) if data else 0.0)
        if len(data) < window:
            data.append(value)
            mean, std = float(np.mean(data)), float(np.std(data)) or 1e-6
        else:
            buffer.append(value)
            if len(buffer) == step:
                data = data[step:] + buffer
                buffer = []
                mean, std = float(np.mean(data)), float(np.std(data)) or 1e-6
    return np.array(out)


def test_windowed_gaussian_matches_nabs_loop():
    x = np.random.default_rng(1).normal(size=700) * 3 + 10
    x[400:420] += 25
    np.testing.assert_allclose(windowed_gaussian(x, 200, 30), _nab_loop(x, 200, 30), atol=1e-9)


def test_pointwise_and_eventwise_against_sklearn_and_by_hand():
    from sklearn.metrics import f1_score, roc_auc_score

    labels = np.zeros(50, dtype=bool)
    labels[10:20] = True
    scores = np.linspace(0, 1, 50)
    scores[12] = 2.0
    p = pointwise_scores(labels, scores, 0.9)
    assert p["f1"] == pytest.approx(f1_score(labels, scores >= 0.9))
    assert p["roc_auc"] == pytest.approx(roc_auc_score(labels, scores))
    e = eventwise_scores([(10, 19), (30, 33)], scores, 0.9)
    # events: row 12 (hits window 1) and rows 45..49 (no window): precision 1/2, recall 1/2
    assert (e["precision"], e["recall"], e["f1"], e["events"]) == (0.5, 0.5, 0.5, 2)
