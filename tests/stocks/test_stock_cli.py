"""The stocks application from the command line: train, evaluate, predict --csv (with
--picture and --output) and report, on a tiny generated run."""

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
    assert "test MAPE % at horizon 1: alpha_t_rim" in result.output
    return root / "run"


def test_train_writes_the_table_with_persistence_and_arima(run_dir):
    test = json.loads((run_dir / "metrics.json").read_text())["test"]
    assert set(test["models"]) == {"alpha_t_rim", "persistence", "arima"}
    assert all(len(t["mape"]) == 2 for t in test["models"].values())
    assert len(test["dm_vs_persistence"]["alpha_t_rim"]) == 2


def test_evaluate_prints_the_same_table(run_dir):
    result = CliRunner().invoke(app, ["evaluate", str(run_dir)])
    assert result.exit_code == 0, result.output
    stored = json.loads((run_dir / "metrics.json").read_text())["test"]["models"]
    row = next(line for line in result.output.splitlines() if line.startswith("persistence"))
    assert float(row.split()[1]) == pytest.approx(stored["persistence"]["mape"][0], abs=5e-4)


def test_predict_a_csv_with_its_attention_and_picture(run_dir, tmp_path):
    prices = tmp_path / "prices.csv"
    write_csv(generate_stocks(30, seed=9).series, prices)
    picture = tmp_path / "att.png"
    result = CliRunner().invoke(app, ["predict", str(run_dir), "--csv", str(prices),
                                      "--picture", str(picture)])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].split("\t")[:4] == ["date", "close", "forecast_1", "forecast_2"]
    assert len(lines) == 1 + 30 - 5 + 1  # one row per full window
    row = dict(zip(lines[0].split("\t"), lines[1].split("\t"), strict=True))
    weights = [float(row[k]) for k in ("weight_close", "weight_sentiment", "weight_null")]
    assert sum(weights) == pytest.approx(1, abs=1e-5)
    assert picture.stat().st_size > 0


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
