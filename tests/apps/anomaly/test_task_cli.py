"""``attnkit train`` / ``evaluate`` / ``predict`` / ``anomaly detect`` for the anomaly-detection
task, end to end on a tiny generated configuration; other runs are refused in one line."""

import json

from typer.testing import CliRunner

from attnkit.apps import task_of
from attnkit.apps.anomaly.solar import generate_solar
from attnkit.apps.anomaly.timeseries import write_csv
from attnkit.cli import app

CONFIG = """task: anomaly-detection
name: tiny
data:
  source: solar
  series: 1
  days: 26
  steps_per_day: 24
  clean_days: 12
detector:
  window: 16
  train_fraction: 0.4
  steps: 15
  lerning_rate: 0.01
"""


def test_unknown_key_is_named_with_its_line(tmp_path):
    (tmp_path / "c.yaml").write_text(CONFIG)
    result = CliRunner().invoke(app, ["train", str(tmp_path / "c.yaml")])
    assert result.exit_code == 2
    assert "line 13" in result.output and "lerning_rate" in result.output


def test_train_evaluate_detect(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text(CONFIG.replace("lerning_rate", "learning_rate"))
    assert task_of(config) == "anomaly-detection"
    run = tmp_path / "run"
    runner = CliRunner()
    trained = runner.invoke(app, ["train", str(config), "-o", str(run)])
    assert trained.exit_code == 0, trained.output
    assert "nab_profile standard, nab_score" in trained.output and "roc_auc" in trained.output
    metrics = json.loads((run / "metrics.json").read_text())
    assert -100.0 <= metrics["nab"]["score"] <= 100.0
    assert (run / "series" / "solar-seed0" / "model.safetensors").is_file()
    evaluated = runner.invoke(app, ["evaluate", str(run), "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    scores = json.loads(evaluated.stdout)
    assert scores["split"] == "test" and scores["unit"] == "series" and scores["count"] == 1
    names = ["nab_profile", "nab_score", "point_f1", "roc_auc", "event_f1", "threshold"]
    assert list(scores["metrics"]) == names
    assert scores["metrics"]["threshold"] == metrics["threshold"]
    evaluated = runner.invoke(app, ["evaluate", str(run)])
    assert f"{run} test: nab_profile standard, nab_score " in evaluated.output
    assert evaluated.output.rstrip().endswith("(1 series)")

    csv = tmp_path / "solar.csv"
    write_csv(generate_solar(days=24, steps_per_day=24, clean_days=12, seed=7), csv)
    out, png = tmp_path / "scores.csv", tmp_path / "explained.png"
    detected = runner.invoke(
        app,
        [
            "anomaly",
            "detect",
            str(run),
            "--csv",
            str(csv),
            "--output",
            str(out),
            "--plot",
            str(png),
            "--threshold",
            "0.0",
        ],
    )
    assert detected.exit_code == 0, detected.output
    assert "attention inside" in detected.output and png.is_file()
    rows = out.read_text().splitlines()
    assert rows[0] == "timestamp,power,raw_score,anomaly_score,anomaly" and len(rows) == 24 * 24 + 1

    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,power\n2024-01-01 00:00:00,1\n2024-01-01 00:00:00,2\n")
    failed = runner.invoke(app, ["anomaly", "detect", str(run), "--csv", str(bad)])
    assert failed.exit_code == 2 and "line 3" in failed.output and "duplicate" in failed.output

    predicted = runner.invoke(app, ["predict", str(run), "--csv", str(csv), "--json"])
    assert predicted.exit_code == 0, predicted.output
    found = json.loads(predicted.stdout)
    assert found["columns"][:2] == ["file", "timestamp"]
    assert found["notes"][0].startswith(f"{csv}: {24 * 24} rows, trained on the first")
    assert all(row[0] == str(csv) for row in found["rows"])


def test_a_run_of_another_kind_is_refused_in_one_line(tmp_path):
    run = tmp_path / "mycls"
    run.mkdir()
    (run / "config.yaml").write_text("name: mycls\ntask: text-classification\n")
    result = CliRunner().invoke(app, ["anomaly", "detect", str(run), "--csv", "x.csv"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"attnkit anomaly detect: error: {run} is a text-classification run; attnkit anomaly "
        "detect needs an anomaly-detection run"
    ]
