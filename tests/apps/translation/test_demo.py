"""The demo end to end with tiny models: tables, BLEU by length, results.json and pictures."""

import json

from rich.console import Console

from attnkit.apps.translation import demo
from attnkit.apps.translation.config import (
    DataConfig,
    DecodeConfig,
    ModelConfig,
    TrainConfig,
    TranslationConfig,
)
from attnkit.apps.translation.experiments import compare


def tiny(attention: str) -> TranslationConfig:
    return TranslationConfig(
        name=f"tiny-{attention}",
        data=DataConfig(generated_sizes=(200, 20, 30), vocab_size=200, max_len=120),
        model=ModelConfig(attention=attention, embed_dim=16, hidden_dim=32),
        train=TrainConfig(epochs=1, max_tokens=1500, learning_rate=0.01, schedule="constant"),
        decode=DecodeConfig(beam_size=1, max_len_ratio=1.2, max_len_offset=5),
    )


def test_demo_writes_tables_results_and_pictures(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "packaged_config", lambda name: tiny(name.removeprefix("demo-")))
    console = Console(record=True, width=120)
    results = demo.run_demo(tmp_path, console=console)
    text = console.export_text()
    assert "BLEU by source length" in text and "reference" in text
    assert [r.name for r in results] == ["none", "bahdanau"]
    saved = json.loads((tmp_path / "results.json").read_text())
    for r in results:
        assert saved[r.name]["bleu"] == r.evaluation.scores.bleu
        assert sum(row["n"] for row in saved[r.name]["by_length"]) == 30
    assert (tmp_path / "heatmap.png").stat().st_size > 1000
    assert (tmp_path / "bleu_by_length.png").stat().st_size > 1000
    # a second run reuses the trained models instead of training again
    again = demo.run_demo(tmp_path, console=Console(record=True))
    assert [r.evaluation.scores.bleu for r in again] == [r.evaluation.scores.bleu for r in results]
    header, rows = compare.bucket_table(results)
    assert header[-2:] == ["none", "bahdanau"] and rows[-1][0] == "all"
