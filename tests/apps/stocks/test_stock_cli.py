"""The stocks application from the command line: train, evaluate (--json), predict --csv (with
--picture and --output) and report, on a tiny generated run; other runs are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from attnkit.apps.stocks.generator import generate_stocks, write_csv
from attnkit.cli import app

CONFIG = {
    "name": "tiny-stocks", "task": "stocks",
    "data": {"source": "generated", "days": 400, "window": 5, "horizon": 2,
             "features": ["close", "sentiment"]},
    "model": {"kind": "alpha_t_rim", "cells": 4, "active": 2, "units": 4, "predict": "change"},
    "train": {"epochs": 2, "batch_size": 32},
}  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("stocks")
    config = root / "c.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(root / "run")])
    assert result.exit_code == 0, result.output
    assert "valid_loss " in result.stdout and ", test_mape_h1 " in result.stdout
    assert "persistence_mape_h1 " in result.stdout and "scaling" not in result.stdout
    return root / "run"


def test_train_writes_the_table_with_persistence_and_arima(run_dir):
    test = json.loads((run_dir / "metrics.json").read_text())["test"]
    assert set(test["models"]) == {"alpha_t_rim", "persistence", "arima"}
    assert all(len(t["mape"]) == 2 for t in test["models"].values())
    assert len(test["dm_vs_persistence"]["alpha_t_rim"]) == 2


def test_evaluate_prints_the_same_table(run_dir):
    result = CliRunner().invoke(app, ["evaluate", str(run_dir)])
    assert result.exit_code == 0, result.output
    stored = json.loads((run_dir / "metrics.json").read_text())["test"]
    row = next(line for line in result.stdout.splitlines() if line.startswith("persistence"))
    assert row.startswith("persistence test: mape.h1 ")
    assert float(row.split()[3].rstrip(",")) == pytest.approx(
        stored["models"]["persistence"]["mape"][0], rel=1e-3
    )
    assert result.stdout.startswith(f"{run_dir} test: mape.h1 ")
    assert f"({stored['windows']} windows)" in result.stdout.splitlines()[0]


def test_evaluate_json_holds_every_horizon_and_the_dm_tests(run_dir):
    result = CliRunner().invoke(app, ["evaluate", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    stored = json.loads((run_dir / "metrics.json").read_text())["test"]
    models = stored["models"]
    assert scores["metrics"]["mape"] == pytest.approx(
        {"h1": models["alpha_t_rim"]["mape"][0], "h2": models["alpha_t_rim"]["mape"][1]}
    )
    assert scores["metrics"]["r2"]["h2"] == pytest.approx(models["alpha_t_rim"]["r2"][1])
    assert set(scores["baselines"]) == {"persistence", "arima"}
    assert scores["count"] == stored["windows"] and scores["unit"] == "windows"
    (table,) = scores["tables"]
    assert table["columns"] == ["model", "horizon", "statistic", "p_value"]
    pairs = [[m, h] for m in ("alpha_t_rim", "arima") for h in (1, 2)]
    assert [row[:2] for row in table["rows"]] == pairs


def test_predict_a_csv_with_its_attention_and_picture(run_dir, tmp_path):
    prices = tmp_path / "prices.csv"
    write_csv(generate_stocks(30, seed=9).series, prices)
    picture = tmp_path / "att.png"
    result = CliRunner().invoke(
        app, ["predict", str(run_dir), "--csv", str(prices), "--picture", str(picture)]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    rows = [line for line in lines if not line.startswith("warning: ")]  # seed 9 starts low
    assert len(rows) == 30 - 5 + 1 + 1  # one row per full window, then the picture written
    assert rows[-1] == f"wrote {picture}" and picture.stat().st_size > 0
    out = tmp_path / "forecasts.tsv"
    command = ["predict", str(run_dir), "--csv", str(prices), "--json", "--output", str(out)]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["columns"][:4] == ["date", "close", "forecast_1", "forecast_2"]
    assert out.read_text(encoding="utf-8").splitlines() == rows[:-1]
    row = dict(zip(found["columns"], found["rows"][0], strict=True))
    weights = [float(row[k]) for k in ("weight_close", "weight_sentiment", "weight_null")]
    assert sum(weights) == pytest.approx(1, abs=1e-5)


def _training_days(tmp_path, name: str, scale: float = 1.0):
    """The run's own first 200 days (all training days) as a CSV, prices times ``scale``."""
    from attnkit.apps.stocks.config import StockDataConfig
    from attnkit.apps.stocks.sets import load_series

    series, _ = load_series(StockDataConfig(**CONFIG["data"]))
    series.values = series.values[:200].copy()
    series.values[:, 0] *= scale
    series.dates, series.lines = series.dates[:200], series.lines[:200]
    return write_csv(series, tmp_path / name)


def test_train_keeps_the_training_range_in_z_units(run_dir):
    scaling = json.loads((run_dir / "metrics.json").read_text())["scaling"]
    assert len(scaling["low"]) == len(scaling["high"]) == 2
    assert all(lo < 0 < hi for lo, hi in zip(scaling["low"], scaling["high"], strict=True))


def test_predict_warns_when_prices_leave_the_training_range(run_dir, tmp_path):
    high = tmp_path / "high.csv"
    _training_days(tmp_path, "high.csv", scale=3.0)  # log(3) is many training stds above
    result = CliRunner().invoke(app, ["predict", str(run_dir), "--csv", str(high)])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stdout.splitlines() if line.startswith("warning: ")]
    assert len(notes) == 1 and notes[0].startswith("warning: close: inputs reach z = ")
    assert "above the training range (max " in notes[0] and "196 of 196 windows" in notes[0]
    assert "WARNING close: inputs reach z = " in result.stderr  # and in the log
    found = json.loads(
        CliRunner().invoke(app, ["predict", str(run_dir), "--csv", str(high), "--json"]).stdout
    )
    assert found["notes"] == notes


def test_predict_in_the_training_range_does_not_warn(run_dir, tmp_path):
    same = _training_days(tmp_path, "same.csv")
    result = CliRunner().invoke(app, ["predict", str(run_dir), "--csv", str(same)])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stdout and "WARNING" not in result.stderr


def test_run_predict_logs_the_warning_once_per_feature(run_dir, tmp_path, caplog):
    from attnkit.apps.stocks.run import open_stocks_run
    from attnkit.apps.stocks.series import read_series

    run = open_stocks_run(run_dir)
    path = _training_days(tmp_path, "high.csv", scale=3.0)
    w = run.windows(read_series(path, columns=["close", "sentiment"]))
    with caplog.at_level("WARNING", logger="attnkit.apps.stocks.run"):
        prices = run.predict(w.x)
    assert prices.shape == (len(w), 2)
    (record,) = caplog.records
    assert record.getMessage().startswith("close: inputs reach z = ")
    caplog.clear()
    run.predict(np.zeros_like(w.x))  # the training mean: inside
    assert caplog.records == []


def test_a_run_without_the_training_range_predicts_without_a_warning(run_dir, tmp_path):
    import shutil

    old = tmp_path / "old-run"
    shutil.copytree(run_dir, old)
    metrics = json.loads((old / "metrics.json").read_text())
    del metrics["scaling"]["low"], metrics["scaling"]["high"]
    (old / "metrics.json").write_text(json.dumps(metrics))
    high = _training_days(tmp_path, "high.csv", scale=3.0)
    result = CliRunner().invoke(app, ["predict", str(old), "--csv", str(high)])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stdout and "WARNING" not in result.stderr


def test_predict_refuses_a_csv_without_the_columns(run_dir, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("date,close\n2020-01-02,10\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["predict", str(run_dir), "--csv", str(bad)])
    assert result.exit_code != 0
    assert "bad.csv" in result.output and "sentiment" in result.output


def test_report_is_one_offline_page(run_dir, tmp_path):
    out = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", str(run_dir), "--output", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 3 and "http" not in page
    assert np.isfinite(json.loads((run_dir / "metrics.json").read_text())["train_seconds"])


def test_picture_is_refused_for_other_tasks_in_one_line(tmp_path):
    result = CliRunner().invoke(app, ["predict", str(tmp_path), "--picture", "x.png"])
    assert result.exit_code != 0 and "Traceback" not in result.output


def test_the_run_loader_refuses_a_run_of_another_kind_in_one_line(tmp_path):
    from attnkit.application import WrongRunKind
    from attnkit.apps.stocks.run import open_stocks_run

    run = tmp_path / "mycls"
    run.mkdir()
    (run / "config.yaml").write_text("name: mycls\ntask: text-classification\n")
    with pytest.raises(WrongRunKind, match="text-classification run; .* needs a stocks run"):
        open_stocks_run(run)
