"""``attnkit evaluate RUN --src FILE.csv`` for anomaly detection (issue 35, item 5): one's own
series scored with the run's settings and threshold; a ``label`` column gives the NAB score,
F1 and ROC-AUC, an unlabelled file the rows flagged, the anomalies and the score's spread with
a note that the NAB score needs labels; bad labels are named by line and column."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from attnkit.apps.anomaly.experiment import headline, measure, run_series
from attnkit.apps.anomaly.own import label_windows
from attnkit.apps.anomaly.run import open_anomaly_run
from attnkit.apps.anomaly.timeseries import read_csv
from attnkit.cli import app

DETECTOR = """detector:
  model: transformer
  window: 8
  d_model: 8
  d_ff: 16
  steps: 6
  batch_size: 16
  threshold: 0.3
"""
WINDOW = (445, 460)  # the burst at rows 450-454, labelled as NAB would: a window around it


def write_csv(path, label=None, rows: int = 600):
    """``rows`` hourly rows of two value columns, a burst at row 450; with ``label`` (a
    function of the row) a label column between them."""
    rng = np.random.default_rng(0)
    t = np.arange(rows)
    power = np.sin(t / 10) + 0.1 * rng.standard_normal(rows)
    power[450:455] += 5.0
    stamps = np.datetime64("2024-01-01T00:00:00") + t.astype("timedelta64[h]")
    head = "timestamp,power,label,temperature" if label else "timestamp,power,temperature"
    lines = [head]
    for i, (s, p) in enumerate(zip(stamps, power, strict=True)):
        mid = f",{label(i)}" if label else ""
        lines.append(f"{s},{p:.4f}{mid},{np.cos(i / 7):.4f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _in_window(i: int) -> int:
    return int(WINDOW[0] <= i <= WINDOW[1])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("anomaly-own")
    csv = write_csv(root / "train.csv")
    config = root / "mine.yaml"
    config.write_text(
        f"name: mine\ntask: anomaly-detection\ndata:\n  source: csv\n  files: [{csv}]\n{DETECTOR}"
    )
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(root / "run")])
    assert result.exit_code == 0, result.output
    return root / "run"


def _evaluate(*args):
    return CliRunner().invoke(app, ["evaluate", *map(str, args)])


def test_label_windows_are_the_runs_of_ones():
    flags = np.array([0, 1, 1, 0, 1, 0, 0, 1], dtype=float)
    assert label_windows("f.csv", flags, list(range(2, 10))) == [(1, 2), (4, 4), (7, 7)]
    assert label_windows("f.csv", np.zeros(3), [2, 3, 4]) == []


def test_an_unlabelled_csv_reports_what_it_can_and_says_why_not_more(run_dir, tmp_path):
    csv = write_csv(tmp_path / "mine.csv")
    result = _evaluate(run_dir, "--src", csv, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    metrics = scores["metrics"]
    assert scores["split"] == str(csv) and (scores["count"], scores["unit"]) == (1, "series")
    assert metrics["labels"] == "none" and "nab_score" not in metrics
    assert metrics["scored_rows"] == 600 - 90 and metrics["threshold"] == 0.3
    assert 0 <= metrics["flagged_rows"] <= metrics["scored_rows"]
    assert metrics["score_median"] <= metrics["score_p99"] <= metrics["score_max"]
    (note,) = scores["notes"]
    assert note.startswith(f"{csv}: it has no label column, so no NAB score")
    text = _evaluate(run_dir, "--src", csv).stdout
    assert text.splitlines()[-1] == note


def test_a_label_column_gives_the_nab_score_and_is_no_value_column(run_dir, tmp_path):
    csv = write_csv(tmp_path / "labelled.csv", label=_in_window)
    result = _evaluate(run_dir, "--src", csv, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["notes"] == []
    # the same file without its label column, its window given by hand, scored directly
    plain = read_csv(write_csv(tmp_path / "plain.csv"))
    plain.windows = [WINDOW]
    run = open_anomaly_run(run_dir)
    detector = replace(run.config.detector, threshold=run.threshold)
    expected = headline(measure(run_series([plain], detector), run.config.profile, 0.3))
    assert set(scores["metrics"]) == set(expected) >= {"nab_score", "point_f1", "roc_auc"}
    for key, value in expected.items():
        assert scores["metrics"][key] == pytest.approx(value), key


def test_a_label_column_without_a_labelled_row_is_said(run_dir, tmp_path):
    csv = write_csv(tmp_path / "zeros.csv", label=lambda i: 0)
    scores = json.loads(_evaluate(run_dir, "--src", csv, "--json").stdout)
    assert scores["metrics"]["labels"] == "none"
    assert scores["notes"][0].startswith(f"{csv}: its label column marks no row")


@pytest.mark.parametrize(
    ("value", "message"),
    [("2", "2 is not 0 or 1"), ("yes", "'yes' is not a number"), ("", "missing value")],
)
def test_a_bad_label_is_named_with_its_line_and_column(run_dir, tmp_path, value, message):
    csv = write_csv(tmp_path / "bad.csv", label=lambda i: value if i == 100 else _in_window(i))
    result = _evaluate(run_dir, "--src", csv)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{csv}, line 102, column 'label': {message}" in result.output


def test_ref_is_refused_and_a_bad_row_is_named(run_dir, tmp_path):
    csv = write_csv(tmp_path / "mine.csv")
    refused = _evaluate(run_dir, "--src", csv, "--ref", csv)
    assert refused.exit_code == 2
    assert "--ref: not taken by anomaly-detection runs" in refused.output
    lines = csv.read_text().splitlines()
    lines[5] = lines[5].rsplit(",", 1)[0] + ",warm"
    csv.write_text("\n".join(lines) + "\n")
    result = _evaluate(run_dir, "--src", csv)
    assert result.exit_code == 2
    assert f"{csv}, line 6, column 'temperature': 'warm' is not a number" in result.output
