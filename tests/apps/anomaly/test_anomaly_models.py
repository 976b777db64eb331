"""The attention detectors: shapes, causality, the VRAE's ELBO terms, and a small run that
learns to flag an injected fault above chance."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from attnkit.apps.anomaly.detector import (
    DetectorConfig,
    detect,
    fit_detector,
    load_detector,
    save_detector,
    sliding_windows,
)
from attnkit.apps.anomaly.models import (
    AttentionVRAE,
    TransformerForecaster,
    gaussian_nll,
    kl_standard_normal,
)
from attnkit.apps.anomaly.solar import generate_solar
from attnkit.apps.anomaly.views import events, explain, mass_inside, plot_explained


def test_gaussian_terms_match_torch_distributions():
    x, mean, logvar = torch.randn(5), torch.randn(5), torch.randn(5)
    normal = torch.distributions.Normal(mean, torch.exp(0.5 * logvar))
    torch.testing.assert_close(gaussian_nll(x, mean, logvar), -normal.log_prob(x))
    kl = torch.distributions.kl_divergence(normal, torch.distributions.Normal(0.0, 1.0)).sum()
    torch.testing.assert_close(kl_standard_normal(mean, logvar), kl)


def test_sliding_windows_end_at_each_row_and_repeat_the_first():
    w = sliding_windows(np.arange(5.0)[:, None], 3)  # (T, W, C)
    assert w.shape == (5, 3, 1)
    assert w[0, :, 0].tolist() == [0, 0, 0] and w[4, :, 0].tolist() == [2, 3, 4]


@pytest.mark.parametrize("model", [TransformerForecaster(2), AttentionVRAE(2, hidden=8)])
def test_scores_depend_only_on_the_window_and_attention_sums_to_one(model):
    model.eval()
    x = torch.randn(3, 12, 2)
    nll, weights = model.score_last(x, samples=0)
    assert nll.shape == (3,) and weights.shape == (3, 12)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3))
    out = model(x, need_weights=True) if isinstance(model, AttentionVRAE) else model(x, True)
    assert out.weights.shape == (3, 12, 12)


def test_forecaster_is_causal():
    model = TransformerForecaster(1).eval()
    x = torch.randn(1, 10, 1)
    y = x.clone()
    y[:, 6:] += 5.0  # change the future of row 5
    a, b = model(x), model(y)
    torch.testing.assert_close(a.mean[:, :6], b.mean[:, :6])
    assert not torch.allclose(a.mean[:, 6:], b.mean[:, 6:])


def test_detect_is_causal_row_by_row():
    s = generate_solar(days=24, steps_per_day=24, clean_days=10, seed=2)
    cfg = DetectorConfig(window=16, steps=5, likelihood=True, long_window=100)
    fitted = fit_detector(s.values, cfg, train_rows=200)
    full = detect(fitted, s.values).score
    cut = detect(fitted, s.values[:300]).score
    np.testing.assert_allclose(full[:300], cut, rtol=1e-5, atol=1e-6)


def test_a_small_forecaster_flags_an_injected_fault_above_chance(tmp_path):
    s = generate_solar(days=24, steps_per_day=24, clean_days=12, seed=5, anomalies=("fault",))
    cfg = DetectorConfig(
        window=24, steps=60, batch_size=32, learning_rate=0.01, likelihood=False, seed=0
    )
    fitted = fit_detector(s.values, cfg, train_rows=12 * 24)
    result = detect(fitted, s.values, need_attention=True)
    first, last = s.windows[0]
    after = result.raw[fitted.train_rows :]
    # the fault's highest score ranks above 97% of the rows after training; by chance the
    # best of its 8 rows would rank at 8/9 = 0.89 on average
    rank = (after < result.raw[first : last + 1].max()).mean()
    assert rank > 0.97
    # explanation: each detected event's attention mass is a probability split
    threshold = float(result.raw[first : last + 1].max())
    found = explain(s, result, threshold, start=fitted.train_rows)
    assert found and all(0.0 <= a.mass_inside <= 1.0 for a in found)
    assert any(a.labelled for a in found)
    png = plot_explained(s, result, found[0], tmp_path / "explained.png", threshold)
    assert png.stat().st_size > 5000
    # saved and reloaded, the detector scores the same
    save_detector(fitted, tmp_path / "det")
    again = detect(load_detector(tmp_path / "det"), s.values).raw
    np.testing.assert_allclose(again, result.raw, rtol=1e-5)


def test_mass_inside_and_events_by_hand():
    weights = np.array([0.1, 0.2, 0.3, 0.4])  # rows 6..9 for t = 9
    assert mass_inside(weights, 9, (8, 20)) == pytest.approx((0.7, 0.5))
    assert events(np.array([0, 1, 1, 0, 1], dtype=bool)) == [(1, 2), (4, 4)]


def test_vrae_loss_decreases():
    torch.manual_seed(0)
    x = torch.sin(torch.linspace(0, 12, 16)).repeat(8, 1)[..., None]  # (8, 16, 1)
    model = AttentionVRAE(1, hidden=8)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    first = float(model.loss(x).detach())
    for _ in range(30):
        loss = model.loss(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(model.loss(x).detach()) < first - 1.0


def test_online_learning_stays_causal_and_leaves_the_fitted_model_alone():
    s = generate_solar(days=24, steps_per_day=24, clean_days=10, seed=2)
    cfg = DetectorConfig(window=16, steps=5, online_every=100, online_steps=3, likelihood=False)
    fitted = fit_detector(s.values, cfg, train_rows=200)
    before = [p.detach().clone() for p in fitted.model.parameters()]
    full = detect(fitted, s.values).raw
    cut = detect(fitted, s.values[:350]).raw
    np.testing.assert_allclose(full[:350], cut, rtol=1e-5, atol=1e-5)
    assert all(torch.equal(a, b) for a, b in zip(before, fitted.model.parameters(), strict=True))
    offline = detect(fit_detector(s.values, replace(cfg, online_every=0), 200), s.values).raw
    assert not np.allclose(offline[300:], full[300:])  # the updates changed later scores


def test_vrae_window_score_is_the_mean_row_nll():
    model = AttentionVRAE(1, hidden=8, score_rows=6).eval()
    x = torch.randn(4, 6, 1)
    out = model(x, sample=False)
    expected = gaussian_nll(x, out.mean, out.logvar).sum(-1).mean(-1)
    torch.testing.assert_close(model.score_last(x, samples=0)[0], expected)
