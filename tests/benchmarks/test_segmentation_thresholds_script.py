"""benchmarks/segmentation_thresholds.py: at 0.5 its F1 is the run's own test F1, and F1 moves
with the threshold as the probabilities say."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import attnkit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.segmentation_thresholds import f1_by_threshold, main  # noqa: E402


def test_f1_at_one_half_is_the_run_s_test_f1(tmp_path, capsys):
    config = tmp_path / "seg.yaml"
    config.write_text(
        "name: seg\ntask: segmentation\ndata: {source: shapes, sizes: [16, 0, 8], size: 32}\n"
        "model: {channels: [4, 8]}\ntrain: {epochs: 3, batch_size: 8, threads: 1}\n"
    )
    attnkit.train(config, tmp_path / "run")
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    table = f1_by_threshold(str(tmp_path / "run"), [0.0, 0.5, 1.0], flips=False)
    assert set(table) == {"train", "test"}
    assert abs(table["test"][0.5] - metrics["test"]["f1"]) < 1e-12
    share = metrics["test"]["foreground"]
    assert abs(table["test"][0.0] - 2 * share / (1 + share)) < 1e-6  # everything foreground
    assert table["test"][1.0] == 0.0  # nothing foreground
    main([str(tmp_path / "run"), "--thresholds", "0.5"])
    assert capsys.readouterr().out.startswith("train ")
