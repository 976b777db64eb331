"""Anomaly detection on a user's own CSV, which has no labelled anomaly windows (issue 35,
item 2): training, ``evaluate``, ``predict`` and ``report`` work, the NAB score is left out
(it needs labels) and the threshold is the configured ``detector.threshold``; and a first run
that failed leaves nothing that blocks the same command again."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from attnkit.apps.anomaly import experiment
from attnkit.apps.anomaly.config import AnomalyConfig, AnomalyData, DetectorConfig
from attnkit.apps.anomaly.nab import nab_score
from attnkit.cli import app

DETECTOR = """detector:
  model: transformer
  window: 8
  d_model: 8
  d_ff: 16
  steps: 6
  batch_size: 16
"""


def write_csv(path, rows: int = 600) -> None:
    """``rows`` hourly rows of two value columns, a burst at row 450, no labels."""
    rng = np.random.default_rng(0)
    t = np.arange(rows)
    power = np.sin(t / 10) + 0.1 * rng.standard_normal(rows)
    power[450:455] += 5.0
    stamps = np.datetime64("2024-01-01T00:00:00") + t.astype("timedelta64[h]")
    lines = ["timestamp,power,temperature"]
    lines += [
        f"{s},{p:.4f},{np.cos(i / 7):.4f}"
        for i, (s, p) in enumerate(zip(stamps, power, strict=True))
    ]
    path.write_text("\n".join(lines) + "\n")


def write_config(tmp_path, steps: int = 6):
    csv = tmp_path / "mine.csv"
    write_csv(csv)
    config = tmp_path / "mine.yaml"
    body = DETECTOR.replace("steps: 6", f"steps: {steps}")
    config.write_text(
        f"name: mine\ntask: anomaly-detection\ndata:\n  source: csv\n  files: [{csv}]\n{body}"
    )
    return config, csv


def test_nab_score_without_any_labelled_window_is_refused_by_name():
    with pytest.raises(ValueError, match="no labelled anomaly windows"):
        nab_score([(np.linspace(0, 1, 200), [])])


def test_training_on_an_unlabelled_csv_uses_the_configured_threshold(tmp_path):
    csv = tmp_path / "mine.csv"
    write_csv(csv)
    detector = DetectorConfig(window=8, d_model=8, d_ff=16, steps=6, batch_size=16, threshold=0.4)
    cfg = AnomalyConfig(data=AnomalyData(source="csv", files=[str(csv)]), detector=detector)
    metrics = experiment.train_experiment(cfg, tmp_path / "run")
    assert metrics["labelled"] is False and "nab" not in metrics
    assert metrics["threshold"] == 0.4 and metrics["threshold_from"] == "detector.threshold"
    assert metrics["scored_rows"] == 600 - 90  # after the first min(15%, 750) rows
    assert 0 <= metrics["flagged_rows"] <= metrics["scored_rows"]
    head = experiment.headline(metrics)
    assert head["labels"] == "none" and "nab_score" not in head
    saved = json.loads((tmp_path / "run" / "threshold.json").read_text())
    assert saved == {"threshold": 0.4}


def test_train_evaluate_predict_report_on_an_unlabelled_csv(tmp_path):
    config, csv = write_config(tmp_path)
    run = tmp_path / "run"
    runner = CliRunner()
    trained = runner.invoke(app, ["train", str(config), "-o", str(run)])
    assert trained.exit_code == 0, trained.output
    assert "labels none" in trained.output and "nab_score" not in trained.output
    evaluated = runner.invoke(app, ["evaluate", str(run), "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    scores = json.loads(evaluated.stdout)["metrics"]
    assert scores["labels"] == "none" and scores["threshold"] == 0.5
    predicted = runner.invoke(app, ["predict", str(run), str(csv), "--json"])
    assert predicted.exit_code == 0, predicted.output
    assert json.loads(predicted.stdout)["notes"][0].startswith(f"{csv}: 600 rows")
    reported = runner.invoke(app, ["report", str(run), "--examples", "1"])
    assert reported.exit_code == 0, reported.output
    assert (run / "report.html").is_file()


def test_a_failed_first_run_does_not_block_the_same_command(tmp_path, monkeypatch):
    config, _ = write_config(tmp_path)
    run = tmp_path / "run"
    runner = CliRunner()

    def broken(*args, **kwargs):
        raise RuntimeError("scoring failed")

    monkeypatch.setattr(experiment, "measure", broken)
    failed = runner.invoke(app, ["train", str(config), "-o", str(run)])
    assert failed.exit_code == 2 and "scoring failed" in failed.output
    model = run / "series" / "mine.csv" / "model.safetensors"
    assert model.is_file()  # a finished series is kept: the retry uses it
    stamp = model.stat().st_mtime_ns
    monkeypatch.undo()
    again = runner.invoke(app, ["train", str(config), "-o", str(run)])
    assert again.exit_code == 0, again.output
    assert model.stat().st_mtime_ns == stamp  # loaded, not fitted again
    assert (run / "threshold.json").is_file() and (run / "metrics.json").is_file()


def test_a_failed_run_retried_with_another_config_says_what_to_do(tmp_path, monkeypatch):
    config, _ = write_config(tmp_path)
    run = tmp_path / "run"
    runner = CliRunner()
    monkeypatch.setattr(experiment, "measure", lambda *a, **k: 1 / 0)
    assert runner.invoke(app, ["train", str(config), "-o", str(run)]).exit_code == 2
    monkeypatch.undo()
    other, _ = write_config(tmp_path, steps=7)
    refused = runner.invoke(app, ["train", str(other), "-o", str(run)])
    assert refused.exit_code == 2
    line = refused.output.strip().splitlines()[-1]
    assert "unfinished" in line and "1 series fitted" in line and "--resume" in line
    assert str(run / "config.yaml") in line and "another directory" in line
    assert (run / "series" / "mine.csv" / "model.safetensors").is_file()  # nothing deleted


def test_without_labels_or_likelihood_the_log_says_where_the_raw_scores_lie(tmp_path, caplog):
    csv = tmp_path / "mine.csv"
    write_csv(csv)
    detector = DetectorConfig(window=8, d_model=8, d_ff=16, steps=6, likelihood=False)
    cfg = AnomalyConfig(data=AnomalyData(source="csv", files=[str(csv)]), detector=detector)
    with caplog.at_level("WARNING", logger="attnkit.apps.anomaly.experiment"):
        metrics = experiment.train_experiment(cfg, tmp_path / "run")
    assert metrics["threshold"] == 0.5
    text = caplog.text
    assert "no labelled anomaly windows" in text and "raw score's scale" in text
    assert "99th percentile" in text
