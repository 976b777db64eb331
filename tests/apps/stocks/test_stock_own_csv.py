"""``attnkit evaluate RUN --src FILE.csv`` for stocks (issue 35, item 5): every window of one's
own CSV scored with the split evaluation's report (MAPE and R² per horizon, persistence beside,
Diebold-Mariano), the training-range warning in the report and the log, a note where the
windows forecast days the run saw, --ref refused, and files that do not fit named."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from attnkit.apps.stocks.generator import generate_stocks
from attnkit.apps.stocks.series import PriceSeries, write_csv
from attnkit.cli import app

CONFIG = {
    "name": "tiny-own", "task": "stocks",
    "data": {"source": "generated", "days": 400, "window": 5, "horizon": 2,
             "features": ["close", "sentiment"]},
    "model": {"kind": "alpha_t_rim", "cells": 4, "active": 2, "units": 4, "predict": "change"},
    "train": {"epochs": 2, "batch_size": 32, "arima": False},
}  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("stocks-own")
    config = root / "c.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(root / "run")])
    assert result.exit_code == 0, result.output
    return root / "run"


def _prices(tmp_path, name: str, days: int = 60, seed: int = 9, scale: float = 1.0):
    """A generated series as a CSV (the run's columns and more), prices times ``scale``."""
    series = generate_stocks(days, seed=seed).series
    series.values[:, 0] *= scale
    return write_csv(series, tmp_path / name), series


def _evaluate(*args: str):
    return CliRunner().invoke(app, ["evaluate", *map(str, args)])


def _mape(truth, forecast):
    return 100 * np.mean(np.abs((truth - forecast) / truth), axis=0)


def test_evaluate_src_scores_every_window_with_persistence_beside(run_dir, tmp_path):
    path, series = _prices(tmp_path, "mine.csv")
    result = _evaluate(run_dir, "--src", path, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["split"] == str(path) and scores["unit"] == "windows"
    assert scores["count"] == 60 - 5 - 2 + 1  # every window whose 2 days ahead are in the file
    assert set(scores["baselines"]) == {"persistence"}  # no ARIMA: the file is no training data
    # persistence is the last input price: its MAPE computed here from the file alone
    close = series.values[:, 0]
    last = np.arange(4, 58)
    truth = np.stack([close[last + 1], close[last + 2]], axis=1)  # (N, 2)
    expected = _mape(truth, close[last][:, None])
    got = scores["baselines"]["persistence"]["mape"]
    assert [got["h1"], got["h2"]] == pytest.approx(expected.tolist(), rel=1e-6)
    (table,) = scores["tables"]
    assert [row[:2] for row in table["rows"]] == [["alpha_t_rim", 1], ["alpha_t_rim", 2]]


def test_the_model_scores_are_its_own_forecasts_of_those_windows(run_dir, tmp_path):
    import attnkit
    from attnkit.apps.stocks.predict import read_for_run
    from attnkit.apps.stocks.windows import cut_windows, log_prices

    path, _ = _prices(tmp_path, "mine.csv")
    scores = json.loads(_evaluate(run_dir, "--src", path, "--json").stdout)
    run = attnkit.load_run(run_dir)
    series = read_for_run(run, path)
    w = cut_windows(run.scaling.transform(log_prices(series)), 0, len(series), 5, 2)
    expected = _mape(run.scaling.prices(w.y), run.predict(w.x, warn=False))
    assert [scores["metrics"]["mape"]["h1"], scores["metrics"]["mape"]["h2"]] == pytest.approx(
        expected.tolist(), rel=1e-5
    )


def test_prices_beyond_the_training_range_warn_in_the_report_and_the_log(run_dir, tmp_path):
    path, _ = _prices(tmp_path, "high.csv", scale=3.0)
    result = _evaluate(run_dir, "--src", path)
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stdout.splitlines() if line.startswith("warning: ")]
    assert warned[0].startswith("warning: close: inputs reach z = ")
    assert "above the training range" in warned[0] and "54 of 54 windows" in warned[0]
    assert "WARNING close: inputs reach z = " in result.stderr
    scores = json.loads(_evaluate(run_dir, "--src", path, "--json").stdout)
    assert scores["notes"] == warned


def test_windows_on_days_the_run_saw_are_noted(run_dir, tmp_path):
    seen = json.loads((run_dir / "metrics.json").read_text())["seen_until"]
    assert seen == "2016-05-19"  # 400 days 70/20/10: the last validation target
    path, series = _prices(tmp_path, "all.csv", days=400, seed=0)
    notes = json.loads(_evaluate(run_dir, "--src", path, "--json").stdout)["notes"]
    first = series.dates[np.arange(4, 398) + 1]  # each window's first forecast day
    inside = int((first <= np.datetime64(seen)).sum())
    assert 0 < inside < 394
    assert f"warning: {inside} of 394 windows forecast days on or before {seen}" in notes[-1]
    later = PriceSeries(  # the first unseen window's inputs onwards: nothing seen
        series.dates[inside:],
        series.values[inside:],
        series.columns,
        series.lines[inside:],
        "x",
    )
    write_csv(later, tmp_path / "later.csv")
    notes = json.loads(_evaluate(run_dir, "--src", tmp_path / "later.csv", "--json").stdout)
    assert not any("on or before" in n for n in notes["notes"])


def test_ref_is_refused_in_one_line(run_dir, tmp_path):
    path, _ = _prices(tmp_path, "mine.csv")
    result = _evaluate(run_dir, "--src", path, "--ref", path)
    assert result.exit_code == 2
    assert "--ref: not taken by stocks runs" in result.output and "Traceback" not in result.output
    alone = _evaluate(run_dir, "--ref", path)
    assert alone.exit_code == 2 and "--ref" in alone.output


def test_a_file_without_the_columns_says_which_the_run_reads(run_dir, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("date,close\n2020-01-02,10\n", encoding="utf-8")
    result = _evaluate(run_dir, "--src", bad)
    assert result.exit_code == 2
    assert f"{bad}, line 1: no column 'sentiment'" in result.output
    assert "this generated run reads date, close, sentiment" in result.output


def test_a_file_too_short_to_score_is_named(run_dir, tmp_path):
    path, _ = _prices(tmp_path, "short.csv")
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:9]))  # 8 days
    result = _evaluate(run_dir, "--src", path)
    assert result.exit_code == 2
    assert f"{path}: 8 days give 2 windows" in result.output and "at least 3" in result.output


def test_a_bad_row_is_named_with_its_line_and_column(run_dir, tmp_path):
    path, _ = _prices(tmp_path, "broken.csv")
    lines = path.read_text().splitlines()
    lines[7] = lines[7].replace(lines[7].split(",")[2], "n/a")
    path.write_text("\n".join(lines) + "\n")
    result = _evaluate(run_dir, "--src", path)
    assert result.exit_code == 2
    assert f"{path}, line 8, column 'sentiment': 'n/a' is not a finite number" in result.output


def test_columns_needed_for_paper_and_csv_runs():
    from attnkit.apps.stocks.config import StockDataConfig
    from attnkit.apps.stocks.predict import columns_needed

    paper = StockDataConfig(source="paper", features=["close", "conv_filter"])
    assert columns_needed(paper).startswith("date, close, conv_filter (and a ticker column")
    mine = StockDataConfig(
        source="csv", path="p.csv", features=["px"], date_column="day", where={"sym": "X"}
    )
    assert columns_needed(mine) == "day, px and sym (the rows with sym = X are kept)"


def _with_range(run_dir, folder, low, high):
    """A copy of the run as if its training days' z had stayed in ``[low, high]``."""
    import shutil

    shutil.copytree(run_dir, folder)
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["scaling"].update(low=low, high=high)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return folder


def test_the_split_evaluation_warns_too(run_dir, tmp_path):
    narrow = _with_range(run_dir, tmp_path / "narrow", [-100.0, -100.0], [-10.0, 100.0])
    result = _evaluate(narrow, "--split", "test")
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("warning: ")]
    assert line.startswith("warning: close: inputs reach z = ") and "above the training" in line
    assert "in 34 of 34 windows" in line and "WARNING close: inputs reach z = " in result.stderr
    wide = _with_range(run_dir, tmp_path / "wide", [-100.0, -100.0], [100.0, 100.0])
    plain = _evaluate(wide, "--split", "test")
    assert "warning" not in plain.stdout and "WARNING" not in plain.stderr
