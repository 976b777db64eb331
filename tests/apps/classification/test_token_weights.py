"""TF-IDF weights against a NumPy computation of scikit-learn's formula, and the views."""

from __future__ import annotations

import math

import numpy as np

from attnkit.apps.classification.token_weights import (
    TfidfBaseline,
    WeightRow,
    plot_png,
    render_html,
)

TEXTS = ["good good film", "bad film", "good plot , bad acting", "film plot"]
LABELS = [1, 0, 1, 0]


def test_tfidf_token_weights_follow_the_formula():
    model = TfidfBaseline.fit(TEXTS, LABELS)
    tokens, weights = model.token_weights("good good plot zebra")
    n = len(TEXTS)
    df = {"good": 2, "plot": 2}
    idf = {t: math.log((1 + n) / (1 + d)) + 1 for t, d in df.items()}
    tf = {"good": 1 + math.log(2), "plot": 1.0}  # sublinear tf: 1 + ln(count)
    raw = {t: tf[t] * idf[t] for t in tf}
    norm = math.sqrt(sum(v * v for v in raw.values()))
    per_token = np.array([raw["good"], raw["good"], raw["plot"], 0.0]) / norm
    assert tokens == ["good", "good", "plot", "zebra"]
    np.testing.assert_allclose(weights, per_token / per_token.sum(), atol=1e-12)
    np.testing.assert_allclose(model.word_weights("good good plot zebra"), weights)


def test_tfidf_baseline_learns_a_separable_toy_task():
    texts = [f"{w} film {i}" for i in range(20) for w in ("great", "awful")]
    labels = [1, 0] * 20
    model = TfidfBaseline.fit(texts, labels)
    assert model.accuracy(["great film", "awful film"], [1, 0]) == 1.0


def test_views_show_both_rows(tmp_path):
    rows = [
        WeightRow("TF-IDF", ["a", "<b>"], [0.25, 0.75]),
        WeightRow("attention", ["a", "<b>"], [0.9, 0.1]),
    ]
    page = render_html("a <b>", rows)
    assert page.count("class='t'") == 4 and "&lt;b&gt;" in page and "<b>" not in page
    assert "0.75" in page and "0.90" in page
    png = plot_png(tmp_path / "v.png", "a <b>", rows)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
