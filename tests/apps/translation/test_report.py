"""The HTML report of a tiny trained run: one self-contained file that parses, with the scores,
the tables and inlined pictures, and nothing to fetch."""

from __future__ import annotations

import base64
from dataclasses import replace
from html.parser import HTMLParser

import pytest
import torch

from attnkit.apps.translation.config import (
    DataConfig,
    DecodeConfig,
    ModelConfig,
    TrainConfig,
    TranslationConfig,
)
from attnkit.apps.translation.decode.evaluate import evaluate_run
from attnkit.apps.translation.decode.translate import Translation
from attnkit.apps.translation.report import write_report
from attnkit.engine.rundir import RunDir


class Page(HTMLParser):
    """Tags, attributes and text of an HTML page; fails on unbalanced tables."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.open_tables = 0
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.open_tables += tag == "table"

    def handle_endtag(self, tag):
        self.open_tables -= tag == "table"

    def handle_data(self, data):
        self.text.append(data)

    def attrs(self, name: str) -> list[str]:
        return [a[name] for _, a in self.tags if a.get(name) is not None]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from attnkit.apps.translation.training import train

    cfg = TranslationConfig(
        name="tiny-report",
        data=DataConfig(generated_sizes=(200, 20, 20), vocab_size=200, max_len=120),
        model=ModelConfig(
            arch="transformer",
            d_model=16,
            num_heads=2,
            d_ff=32,
            encoder_layers=1,
            decoder_layers=2,
            dropout=0.1,
        ),
        train=TrainConfig(
            epochs=1, max_tokens=1500, learning_rate=0.01, schedule="constant", threads=1
        ),
        decode=DecodeConfig(beam_size=2, max_len_ratio=1.2, max_len_offset=5),
    )
    root = tmp_path_factory.mktemp("runs") / "tiny"
    train(cfg, root, progress=False)
    return root


def test_report_is_one_self_contained_page(run_dir, tmp_path):
    evaluation = evaluate_run(run_dir, "test")
    path = write_report(run_dir, tmp_path / "out" / "report.html", evaluation, n_examples=2)
    html = path.read_text(encoding="utf-8")
    page = Page(html)
    text = " ".join(page.text)
    assert page.open_tables == 0
    # scores with their signatures, the training history and the by-length table
    assert f"{evaluation.scores.bleu:.2f}" in text and f"{evaluation.scores.chrf:.2f}" in text
    assert evaluation.scores.bleu_signature in text and "nrefs:1" in text
    history = RunDir(run_dir).read_metrics()["history"]
    assert f"{history[0]['valid_loss']:.4g}" in text and "train_loss" in text
    for row in evaluation.by_length:
        assert row["bucket"] in text
    assert "tiny-report" in text and "d_model" in text  # the configuration
    assert evaluation.translations[0].source in text or "Test sentence" in text
    # pictures inlined: by-length plot, the position term per head (issue 21) and (mean,
    # per-head) heatmaps for two examples
    assert "Position term (absolute)" in text
    images = page.attrs("src")
    assert len(images) == 6
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert all(base64.b64decode(s.split(",", 1)[1]).startswith(b"\x89PNG") for s in images)
    # nothing to fetch: no external src/href, no scripts or style sheets by link
    links = page.attrs("src") + page.attrs("href")
    assert not [u for u in links if u.lower().startswith(("http://", "https://", "//"))]
    assert not [tag for tag, _ in page.tags if tag in ("script", "link", "iframe")]
    assert "http://" not in html and "https://" not in html


def test_report_evaluates_the_run_itself(run_dir, tmp_path):
    path = write_report(run_dir, tmp_path / "report.html", n_examples=1)
    page = Page(path.read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert "Scores on test" in text and "BLEU" in text and "signature" in text
    assert len(page.attrs("src")) == 4  # by length, position term, one example's mean and heads


def test_report_of_single_head_and_attention_free_translations(run_dir, tmp_path):
    def translation(source: str, attention: dict) -> Translation:
        return Translation(
            source, ["x y"], [-1.0], ["▁a", "▁b"], [["▁x", "▁y"]], [True], [attention]
        )

    recurrent = translation("a b", {"cross": torch.full((1, 3, 2), 0.5)})  # one layer, one head
    baseline = translation("a b c", {})  # attention "none": nothing recorded
    evaluation = replace(
        evaluate_run(run_dir, "test", limit=2),
        by_length=[],
        translations=[recurrent, baseline],
        references=["r1", "r2"],
    )
    page = Page(write_report(run_dir, tmp_path / "r.html", evaluation, 2).read_text("utf-8"))
    text = " ".join(page.text)
    assert len(page.attrs("src")) == 2  # position term, one heatmap: no heads, no by-length
    assert "no attention to draw" in text and "r2" in text
