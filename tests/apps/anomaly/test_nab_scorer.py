"""The NAB score on hand-built cases whose value follows from the paper's formula (Lavin &
Ahmad 2015, eq. (1): sigma(y) = 2 / (1 + e^{5y}) - 1) and NAB's rules, the windowed-Gaussian
detector against a literal transcription of NAB's loop, and NAB's published numbers: the three
profiles' cost matrices and the windowed-Gaussian detector's published scores, reproduced on the
full corpus (``../shared/data/nab``; skipped when absent). Expected values come from NAB's
files, written out below, never from :data:`attnkit.apps.anomaly.nab.PROFILES`."""

import math
import os
from pathlib import Path

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
from attnkit.apps.anomaly.timeseries import load_nab

# NAB config/profiles.json (github.com/numenta/NAB, commit ea702d7), copied literally. The
# scorer uses tpWeight, fpWeight and fnWeight; tnWeight is listed there but never used.
NAB_PROFILES = {
    "standard": {"tpWeight": 1.0, "fnWeight": 1.0, "fpWeight": 0.11, "tnWeight": 1.0},
    "reward_low_FP_rate": {"tpWeight": 1.0, "fnWeight": 1.0, "fpWeight": 0.22, "tnWeight": 1.0},
    "reward_low_FN_rate": {"tpWeight": 1.0, "fnWeight": 2.0, "fpWeight": 0.11, "tnWeight": 1.0},
}
A_TP = {name: p["tpWeight"] for name, p in NAB_PROFILES.items()}
A_FP = {name: p["fpWeight"] for name, p in NAB_PROFILES.items()}
A_FN = {name: p["fnWeight"] for name, p in NAB_PROFILES.items()}


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
    expected = sigma(y) / sigma(-1.0) * A_TP["standard"]
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
    assert before.score == pytest.approx(-1.0 - 0.11)  # the window is also missed
    after = score_file(flags_at(500, 650), [WINDOW], 0.5, STD)
    assert after.score == pytest.approx(1.0 + 0.11 * sigma(51 / 99))
    far = score_file(flags_at(500, 999), [WINDOW], 0.5, STD)
    assert far.score == pytest.approx(1.0 - 0.11)  # y >= 3: a full FP
    assert far.fp == 1


def test_the_probationary_period_does_not_count():
    assert score_file(flags_at(10, 149), [WINDOW], 0.5, STD).score == pytest.approx(-1.0)
    assert score_file(flags_at(150), [WINDOW], 0.5, STD).score == pytest.approx(-1.0 - 0.11)


def test_profiles_are_the_cost_matrices_nab_publishes():
    assert sorted(PROFILES) == sorted(NAB_PROFILES)
    for name in NAB_PROFILES:
        got = PROFILES[name]
        assert (got.tp, got.fp, got.fn) == (A_TP[name], A_FP[name], A_FN[name]), name


@pytest.mark.parametrize("name", sorted(NAB_PROFILES))
def test_profiles_weigh_misses_and_false_alarms(name):
    miss_and_alarm = score_file(flags_at(300), [WINDOW], 0.5, PROFILES[name]).score
    assert miss_and_alarm == pytest.approx(-A_FN[name] - A_FP[name])
    late = score_file(flags_at(599), [WINDOW], 0.5, PROFILES[name]).score  # the last row
    assert late == pytest.approx(A_TP[name] * sigma(-1 / 100) / sigma(-1.0))


def test_normalisation_null_is_zero_perfect_is_hundred():
    windows = [(200, 249), (600, 699)]
    perfect = np.zeros(T)
    perfect[[200, 600]] = 1.0
    assert nab_score([(perfect, windows)]).score == pytest.approx(100.0)
    assert nab_score([(np.full(T, 0.5), windows)]).score == pytest.approx(0.0)
    # one window found at its start, the other missed, one far false positive:
    half = np.zeros(T)
    half[[200, 999]] = 1.0  # (999 - 699) / 99 >= 3: a full false positive
    for name in NAB_PROFILES:
        raw = A_TP[name] - A_FN[name] - A_FP[name]
        expected = 100 * (raw + 2 * A_FN[name]) / (2 * A_TP[name] + 2 * A_FN[name])
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


# -- NAB's published results for its windowed-Gaussian detector ------------------------------

NAB_DATA = (
    Path(os.environ.get("ATTNKIT_DATA_DIR") or Path(__file__).parents[3] / ".." / "shared" / "data")
    / "nab"
)
# NAB results/final_results.json, "windowedGaussian" (commit ea702d7): normalised scores.
PUBLISHED_FINAL = {
    "standard": 39.649523496077585,
    "reward_low_FP_rate": 20.86798582474138,
    "reward_low_FN_rate": 47.4100271583046,
}
# NAB config/thresholds.json, "windowedGaussian": the threshold NAB's sweep chose, per profile.
PUBLISHED_THRESHOLD = {"standard": 1.0, "reward_low_FP_rate": 1.0, "reward_low_FN_rate": 1.0}
# NAB results/windowedGaussian/windowedGaussian_<profile>_scores.csv: the "Totals" row's
# Score (the corpus' raw score) and a few files' Score column, at the threshold above.
PUBLISHED_TOTAL = {
    "standard": -24.0131054891,
    "reward_low_FP_rate": -67.5862728866,
    "reward_low_FN_rate": -67.0131054891,
}
PUBLISHED_FILES = {
    "standard": {
        "realAWSCloudwatch/ec2_disk_write_bytes_c0d644.csv": -1.09599853032,
        "realKnownCause/rogue_agent_key_updown.csv": -1.3964908955,
        "realTweets/Twitter_volume_AAPL.csv": 1.51399683626,
        "realKnownCause/nyc_taxi.csv": -5.0,
        "realTraffic/speed_7578.csv": 3.47059145681,
    },
    "reward_low_FP_rate": {
        "realAWSCloudwatch/ec2_disk_write_bytes_c0d644.csv": -3.0909727984,
        "realKnownCause/rogue_agent_key_updown.csv": -2.1748083231,
        "realTweets/Twitter_volume_AAPL.csv": -0.818874447425,
        "realKnownCause/nyc_taxi.csv": -5.0,
        "realTraffic/speed_7578.csv": 3.36059145681,
    },
    "reward_low_FN_rate": {
        "realAWSCloudwatch/ec2_disk_write_bytes_c0d644.csv": -2.09599853032,
        "realKnownCause/rogue_agent_key_updown.csv": -2.3964908955,
        "realTweets/Twitter_volume_AAPL.csv": 1.51399683626,
        "realKnownCause/nyc_taxi.csv": -10.0,
        "realTraffic/speed_7578.csv": 3.47059145681,
    },
}
# NAB results/null/null_<profile>_scores.csv, "Totals" row: the null detector's raw score.
PUBLISHED_NULL = {"standard": -116.0, "reward_low_FP_rate": -116.0, "reward_low_FN_rate": -232.0}


@pytest.fixture(scope="module")
def windowed_gaussian_on_nab():
    """``{file: (scores, windows)}`` of NAB's windowed-Gaussian detector (window 6400, step
    100) on all 58 NAB series.

    NAB's detectors write their scores to CSV with Python 2's ``str(float)`` (12 significant
    digits) and its scorer thresholds what it reads back: 0.9999999999995 became 1.0 and counts
    at threshold 1.0. The scores are rounded the same way, or the published figures are out of
    reach."""
    if not (NAB_DATA / "labels").is_dir():
        pytest.skip(f"NAB not found at {NAB_DATA}")
    out = {}
    for series in load_nab(NAB_DATA):
        raw = windowed_gaussian(series.values[:, 0], 6400, 100)
        out[series.name] = (np.array([float(f"{v:.12g}") for v in raw]), series.windows)
    assert len(out) == 58 and sum(len(w) for _, w in out.values()) == 116
    return out


@pytest.mark.parametrize("name", sorted(NAB_PROFILES))
def test_nabs_published_windowed_gaussian_scores_are_reproduced(name, windowed_gaussian_on_nab):
    files = windowed_gaussian_on_nab
    threshold = PUBLISHED_THRESHOLD[name]
    for key, published in PUBLISHED_FILES[name].items():
        scores, windows = files[key]
        got = score_file(scores, windows, threshold, PROFILES[name]).score
        assert got == pytest.approx(published, abs=1e-9), key
    total = sum(score_file(s, w, threshold, PROFILES[name]).score for s, w in files.values())
    assert total == pytest.approx(PUBLISHED_TOTAL[name], abs=1e-6)
    result = nab_score(list(files.values()), name)  # NAB's threshold sweep, then eq. (3)
    assert result.threshold == threshold
    assert result.null == pytest.approx(PUBLISHED_NULL[name])
    assert result.raw == pytest.approx(PUBLISHED_TOTAL[name], abs=1e-6)
    assert result.score == pytest.approx(PUBLISHED_FINAL[name], abs=1e-6)
