"""``python -m benchmarks SUITE``: the suites' command line, which lives in the repository
(benchmarks/suites/command.py), not in the installed package. A tiny kernels run through the
real entry point, one-line errors, every ``python -m benchmarks`` line the docs show parsed by
the real options, and the hidden ``attnkit bench`` that only says where the suites went."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from benchmarks.suites import check_schema
from benchmarks.suites.command import app as bench_app
from typer.testing import CliRunner

from attnkit.cli import app

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "python -m benchmarks"
runner = CliRunner()


def test_kernels_tiny_through_the_entry_point_writes_the_options_given(tmp_path):
    out = tmp_path / "kernels.json"
    args = ["kernels", "--tiny", "--lengths", "16", "--repeats", "2", "--dtypes", "fp32"]
    args += ["--modes", "fwd", "--masks", "causal", "--no-memory", "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    check_schema(report)
    assert report["command"] == shlex.join([*ENTRY.split(), *args])
    assert report["suite"] == "kernels" and report["options"]["repeats"] == 2
    attend = [r["params"] for r in report["results"] if r["impl"] == "attend"]
    assert {(p["L"], p["mode"], p["mask"]) for p in attend} == {(16, "fwd", "causal")}
    assert {r["params"]["dtype"] for r in report["results"]} == {"fp32"}
    assert all(len(r["times"]) == 2 for r in report["results"] if r["impl"] != "torch.mm")


def test_an_unknown_suite_is_refused_in_one_line():
    result = runner.invoke(bench_app, ["nosuch"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "unknown suite 'nosuch'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_only_kernels_takes_a_device_and_the_device_is_recorded(tmp_path, monkeypatch):
    result = runner.invoke(bench_app, ["decode", "--device", "cuda"])
    assert result.exit_code == 2 and "only kernels takes a device" in result.stderr
    out = tmp_path / "k.json"
    args = ["kernels", "--tiny", "--lengths", "16", "--repeats", "1", "--dtypes", "fp32"]
    args += ["--modes", "fwd", "--masks", "causal", "--device", "cpu", "--out", str(out)]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    result = runner.invoke(bench_app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["options"]["kernel_options"]["device"] == "cpu"


def snippets(text: str):
    """(offset, code) for each line of a fenced block and each inline code span of ``text``."""
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
    at = 0
    for block in fenced.finditer(text):
        for span in re.finditer(r"`([^`]+)`", text[at : block.start()]):
            yield at + span.start(1), span.group(1).replace("\n", " ")
        for line in re.finditer(r"[^\n]+", block.group(1)):
            yield block.start(1) + line.start(), line.group(0)
        at = block.end()
    for span in re.finditer(r"`([^`]+)`", text[at:]):
        yield at + span.start(1), span.group(1).replace("\n", " ")


def documented_lines() -> list[tuple[str, list[str]]]:
    """Every ``python -m benchmarks ARGS`` in README.md and docs/**/*.md, in code blocks or
    inline code: (file:line, its arguments), shell comments and ``[options]`` left out. The bare
    name in prose runs nothing and is not a line."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for offset, code in snippets(text):
            for match in re.finditer(r"python -m benchmarks +([^#`]+)", code):
                words = [w for w in shlex.split(match.group(1)) if w != "[options]"]
                line = text.count("\n", 0, offset) + 1
                found.append((f"{page.relative_to(ROOT)}:{line}", words))
    return found


def parse_error(words: list[str]) -> str | None:
    """Why the suites' command line refuses ``words``, or None when it parses them."""
    command = typer.main.get_command(bench_app)
    try:
        command.make_context(ENTRY, list(words))
    except Exception as err:  # click's usage errors, typer's own on newer versions
        return f"{type(err).__name__}: {err}"
    return None


def test_every_documented_line_parses():
    lines = documented_lines()
    assert len(lines) >= 15, lines  # docs/benchmarks.md alone shows more
    wrong = [
        f"{where}: {' '.join(words)}: {parse_error(words)}"
        for where, words in lines
        if parse_error(words)
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "words", [["kernels", "--no-such-option"], ["kernels", "--repeats", "five"], []]
)
def test_the_checker_refuses_a_wrong_line(words):
    assert parse_error(words) is not None


def test_the_installed_cli_only_points_to_the_suites(tmp_path):
    args = ["bench", "kernels", "--tiny", "--out", str(tmp_path / "k.json")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "python -m benchmarks SUITE" in result.stderr
    assert not (tmp_path / "k.json").exists()
    assert typer.main.get_command(app).get_command(None, "bench").hidden
