"""A failing command prints its error line alone: the INFO lines of its set-up are held on the
console (``attnkit.commands.HeldConsole``) and dropped when it fails (issue 35: "failing runs
print INFO lines before the error line"); a run that trains prints them all, in order."""

import io
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnkit import commands
from attnkit.cli import app


def _logger(stream: io.StringIO) -> tuple[logging.Logger, commands.HeldConsole]:
    handler = commands.HeldConsole(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger(f"held-{id(stream)}")
    logger.handlers, logger.propagate = [handler], False
    logger.setLevel(logging.INFO)
    return logger, handler


def test_set_up_lines_wait_for_training_then_print_in_order():
    out = io.StringIO()
    log, _ = _logger(out)
    log.info("device: cpu")
    log.info("precision: fp32")
    assert out.getvalue() == ""
    log.info("model: 10 parameters", extra={"stage": "training"})
    log.info("epoch 1")
    lines = out.getvalue().splitlines()
    assert lines == ["INFO device: cpu", "INFO precision: fp32", "INFO model: 10 parameters"] + [
        "INFO epoch 1"
    ]


def test_a_warning_prints_what_is_held_before_it():
    out = io.StringIO()
    log, _ = _logger(out)
    log.info("device: cpu")
    log.warning("inputs leave the training range")
    assert out.getvalue().splitlines() == [
        "INFO device: cpu",
        "WARNING inputs leave the training range",
    ]


def test_a_failure_drops_the_held_lines_and_success_prints_them():
    dropped, kept = io.StringIO(), io.StringIO()
    for out, drop in ((dropped, True), (kept, False)):
        log, handler = _logger(out)
        log.info("device: cpu")
        handler.let_go(drop)
        log.info("after")
    assert dropped.getvalue().splitlines() == ["INFO after"]
    assert kept.getvalue().splitlines() == ["INFO device: cpu", "INFO after"]


def test_a_slow_set_up_still_shows_its_progress(monkeypatch):
    monkeypatch.setattr(commands, "HOLD_SECONDS", -1.0)  # as if the hold had run out
    out = io.StringIO()
    log, _ = _logger(out)
    log.info("reading the corpus")
    log.info("building the vocabulary")
    assert out.getvalue().splitlines() == [
        "INFO reading the corpus",
        "INFO building the vocabulary",
    ]


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers, root.level = handlers, level


def test_a_train_that_fails_in_its_set_up_prints_one_line(tmp_path, restore_logging):
    config = Path(__file__).parents[2] / "configs" / "multi30k-none-cpu.yaml"
    missing = f"data.data_dir={tmp_path / 'nothere'}"
    args = ["train", str(config), "-o", str(tmp_path / "run"), "--set", missing]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines  # before the fix: the device and precision INFO lines first
    assert lines[0].startswith("attnkit train: error: ") and "nothere" in lines[0]
