"""`attnkit report RUN` for every registered application: one offline page with the run's
config, training history, scores and attention pictures (attnkit.interpret.run_report), and
the generic page's behaviour on a stub App (a failing evaluate is a note, not a failure)."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch
import yaml
from tests.test_load_run_every_task import CONFIGS, non_uniform_png, train_tiny
from typer.testing import CliRunner

from attnkit.apps import TASKS, app_named
from attnkit.cli import app
from attnkit.config import to_dict
from attnkit.interpret.report_page import fmt
from attnkit.interpret.run_report import write_run_report
from attnkit.interpret.structure import AttentionRecord
from attnkit.results import Scores, Shown, Table


class Page(HTMLParser):
    """The tags and attributes of a page; fails on unbalanced tables."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.open_tables = 0
        self.feed(text)
        self.close()
        assert self.open_tables == 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.open_tables += tag == "table"

    def handle_endtag(self, tag):
        self.open_tables -= tag == "table"


def pngs(page: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r"data:image/png;base64,([^\"]+)", page)]


def check_offline(page: str) -> None:
    """Nothing to fetch: no scripts, links, frames; every image inlined."""
    tags = Page(page).tags
    assert not [t for t, _ in tags if t in ("script", "link", "iframe", "object", "embed")]
    assert all(a.get("src", "").startswith("data:image/png;base64,") for t, a in tags if t == "img")
    assert not [a for _, a in tags if "href" in a]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    made: dict[str, Path] = {}

    def run_of(task: str) -> Path:
        if task not in made:
            made[task] = train_tiny(task, tmp_path_factory.mktemp(task))
        return made[task]

    return run_of


def test_every_registered_app_is_covered():
    assert sorted(TASKS) == sorted(CONFIGS)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_report_of_every_app(task, runs, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    run = runs(task)
    out = tmp_path / "page.html"
    command = ["report", str(run), "--output", str(out), "--examples", "2", "--json"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    written = json.loads(result.stdout)
    assert written["run"] == str(run) and written["files"] == [str(out)]
    page = out.read_text(encoding="utf-8")
    check_offline(page)
    found = app_named(task)
    cfg = found.load_config(run / "config.yaml")
    assert "<h2>Configuration</h2>" in page
    for section, values in to_dict(cfg).items():
        if isinstance(values, dict) and values:
            assert f"<h3>{section}</h3>" in page
            key, value = next(iter(values.items()))
            assert f"<td>{key}</td><td>{fmt(value)}</td>" in page, (section, key)
    history = page.split("<h2>Training history</h2>", 1)[1]
    assert "<th>epoch</th>" in history.split("<h2>", 1)[0]  # a table of epochs
    assert re.search(r"<h2>(Test scores|Scores on (test|valid|dev))</h2>", page)
    assert "could not be scored" not in page and "No examples:" not in page
    pictures = pngs(page)
    assert pictures and any(non_uniform_png(p) for p in pictures)


@pytest.mark.parametrize(
    ("task", "split"), [("text-classification", "valid"), ("segmentation", "test")]
)
def test_report_scores_are_what_evaluate_says(task, split, runs, tmp_path):
    """The tiny classification run has no test texts: its report scores the valid split."""
    run = runs(task)
    result = CliRunner().invoke(app, ["evaluate", str(run), "--split", split, "--json"])
    assert result.exit_code == 0, result.output
    scored = json.loads(result.stdout)
    out = tmp_path / "page.html"
    assert CliRunner().invoke(app, ["report", str(run), "--output", str(out)]).exit_code == 0
    page = out.read_text(encoding="utf-8")
    assert f"<h2>Scores on {scored['split']}</h2><p>{scored['count']} {scored['unit']}." in page
    for name, value in scored["metrics"].items():
        assert f"<tr><td>{name}</td><td>{fmt(value)}</td></tr>" in page


class StubApp:
    """An App as the report sees it: a config, a failing evaluate, one example with a record."""

    title = "Stub"

    def __init__(self, evaluate):
        self._evaluate = evaluate

    def load_config(self, path):
        from attnkit.apps.classification.config import load_classifier_config

        return load_classifier_config(path)

    def evaluate(self, run_dir, options):
        return self._evaluate(run_dir, options)

    def examples(self, run_dir, n):
        w = torch.tensor([[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]])  # (H=1, Tq=2, Tk=3)
        record = AttentionRecord({"cross": [w]}, {"cross": (["p", "q"], ["a", "b", "c"])})
        return [Shown("a b c", "p q", record, details={"score": 0.5})]


@pytest.fixture
def stub_run(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    cfg = {**CONFIGS["text-classification"], "name": "stub"}
    (root / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    history = [{"epoch": 1, "train_loss": 0.75}, {"epoch": 2, "train_loss": 0.5}]
    (root / "metrics.json").write_text(json.dumps({"history": history, "best_epoch": 2}))
    return root


def test_a_failing_evaluate_is_a_note_and_a_record_is_drawn(stub_run, tmp_path):
    def fails(run_dir, options):
        raise FileNotFoundError(f"no {options.split} data here")

    written = write_run_report(StubApp(fails), stub_run, tmp_path / "r.html", 1)
    page = Path(written.files[0]).read_text(encoding="utf-8")
    check_offline(page)
    assert "could not be scored" in page and "no test data here" in page
    assert "no valid data here" in page
    assert '<tr class="best"><td>2</td><td>0.5</td></tr>' in page
    (picture,) = pngs(page)
    assert non_uniform_png(picture)
    assert "<td>input</td><td>a b c</td>" in page and "<td>score</td><td>0.5</td>" in page


def test_an_empty_test_split_falls_back_to_valid(stub_run, tmp_path):
    def scores(run_dir, options):
        count = 0 if options.split == "test" else 7
        table = Table("by length", ["words", "n"], [["1-5", count]])
        return Scores(str(run_dir), options.split, {"accuracy": 0.25}, count, tables=[table])

    written = write_run_report(StubApp(scores), stub_run, tmp_path / "r.html", 0)
    page = Path(written.files[0]).read_text(encoding="utf-8")
    assert "<h2>Scores on valid</h2><p>7 examples.</p>" in page
    assert "<tr><td>accuracy</td><td>0.25</td></tr>" in page
    assert "<h3>by length</h3>" in page and "<td>1-5</td><td>7</td>" in page
    assert "<h2>Examples</h2>" not in page  # n_examples 0
