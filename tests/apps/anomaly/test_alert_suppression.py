"""Alert suppression (``suppress_alerts``) on hand-worked streams, against a transcription of
Numenta's ``_filterLikelihoods`` (nupic ``anomaly_likelihood``), and for causality; the
likelihood fitted to short-window means; the detector's scoring of raw scores."""

import numpy as np
import pytest

from attnkit.apps.anomaly.baselines import anomaly_likelihood, gaussian_tail, suppress_alerts
from attnkit.apps.anomaly.detector import DetectorConfig, score_from_raw


def nupic_filter(likelihoods, red=0.99999, yellow=0.999):
    """nupic's loop, on ``1 - L`` as nupic stores it."""
    red, yellow = 1.0 - red, 1.0 - yellow
    out = [likelihoods[0]]
    for i, v in enumerate(likelihoods[1:]):
        if v <= red:
            out.append(v if likelihoods[i] > red else yellow)
        else:
            out.append(v)
    return np.array(out)


def test_keeps_the_first_of_each_burst():
    s = np.array([0.1, 0.6, 0.7, 0.9, 0.2, 0.55, 0.5, 0.49])
    out = suppress_alerts(s, threshold=0.5, rows=1, floor=0.3)
    np.testing.assert_allclose(out, [0.1, 0.6, 0.3, 0.3, 0.2, 0.55, 0.3, 0.49])


def test_refractory_rows_reach_back_over_gaps():
    s = np.array([0.6, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1, 0.8, 0.1, 0.9])
    # row 3: row 0 is within 3 rows; row 7: rows 4-6 hold no alert; row 9: row 7 is
    out = suppress_alerts(s, threshold=0.5, rows=3, floor=0.0)
    np.testing.assert_allclose(out, [0.6, 0.1, 0.1, 0.0, 0.1, 0.1, 0.1, 0.8, 0.1, 0.0])
    # with rows=1 only adjacent alerts are silenced, so nothing changes here
    np.testing.assert_allclose(suppress_alerts(s, threshold=0.5, rows=1, floor=0.0), s)


def test_a_silenced_alert_still_silences_the_next():
    # the test is on the input: a sustained run keeps only its onset
    s = np.full(10, 0.8)
    out = suppress_alerts(s, threshold=0.5, rows=2, floor=0.3)
    np.testing.assert_allclose(out, [0.8] + [0.3] * 9)


def test_matches_numenta_filter_likelihoods():
    rng = np.random.default_rng(0)
    # likelihoods clustered near 1 so that red runs occur; no value sits on the boundary
    likelihood = 1.0 - 10.0 ** rng.uniform(-8, -2, size=500)
    likelihood = likelihood[np.abs(likelihood - 0.99999) > 1e-9]
    expected = 1.0 - nupic_filter(1.0 - likelihood)
    out = suppress_alerts(likelihood, threshold=0.99999, rows=1, floor=0.999)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)
    assert (out != likelihood).sum() > 10  # the case exercises the filter


def test_is_causal():
    rng = np.random.default_rng(1)
    s = rng.uniform(size=300)
    base = suppress_alerts(s, threshold=0.7, rows=5, floor=0.1)
    for cut in (1, 50, 151, 299):
        changed = s.copy()
        changed[cut:] = rng.uniform(size=300 - cut)
        out = suppress_alerts(changed, threshold=0.7, rows=5, floor=0.1)
        np.testing.assert_array_equal(out[:cut], base[:cut])


def test_rows_zero_is_identity_and_floor_must_be_below_threshold():
    s = np.array([0.9, 0.9, 0.1])
    np.testing.assert_array_equal(suppress_alerts(s, rows=0), s)
    with pytest.raises(ValueError, match="floor"):
        suppress_alerts(s, threshold=0.5, floor=0.5)


def test_likelihood_of_averages_uses_the_spread_of_the_means():
    # rows 0..39 alternate 0, 2 (raw mean 1, sd 1; every 2-row mean is 1), row 40 jumps to 4
    raw = np.tile([0.0, 2.0], 20).tolist() + [4.0]
    kw = {"long_window": 10, "short_window": 2, "log_scale": False}
    paper = anomaly_likelihood(np.array(raw), **kw)
    nupic = anomaly_likelihood(np.array(raw), of_averages=True, **kw)
    # mu~ = (2 + 4) / 2 = 3; paper: z = (3 - 1) / 1 = 2
    assert paper[-1] == pytest.approx(1.0 - gaussian_tail(2.0), abs=1e-12)
    # nupic: the means before row 40 are all 1, so sigma is the 1e-4 floor and z is huge
    assert nupic[-1] > 1.0 - 1e-12
    assert nupic[-2] < 0.9  # a steady row is no alarm either way


def test_detector_scoring_composes_likelihood_and_suppression_causally():
    rng = np.random.default_rng(2)
    raw = rng.gamma(2.0, size=400)
    raw[[200, 201, 202, 260]] += 30.0  # a burst and a lone spike
    cfg = DetectorConfig(
        short_window=1,
        long_window=100,
        likelihood_of_averages=True,
        suppress_rows=24,
        suppress_threshold=0.5,
    )
    score = score_from_raw(raw, cfg, train_rows=50)
    expected = suppress_alerts(
        anomaly_likelihood(raw, long_window=100, short_window=1, warmup=50, of_averages=True),
        threshold=0.5,
        rows=24,
        floor=0.3,
    )
    np.testing.assert_array_equal(score, expected)
    assert score[200] >= 0.5 and score[201] == score[202] == 0.3  # onset kept, rest lowered
    assert score[260] >= 0.5  # more than 24 rows after the burst: an alert again
    np.testing.assert_array_equal(score_from_raw(raw[:230], cfg, train_rows=50), score[:230])
