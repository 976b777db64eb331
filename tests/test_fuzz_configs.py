"""Generated configs through ``attnkit train``: arbitrary text, and every task's shipped config
with a random value put at a random place. Each one is either a valid config (training is
replaced by a stub that records it) or refused with exit code 2 and one line that names the
file, never a traceback and never an unexpected error type (the boundary's ``--debug`` hint
marks those)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_config_fuzz import VALID
from typer.testing import CliRunner

from attnkit.apps import app_named
from attnkit.cli import app
from attnkit.results import Trained
from fuzz_counts import record

SHIPPED = VALID  # one shipped config per task, the mutation test's table
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))


def _put(data: dict, path: tuple, key, value) -> dict:
    node = data
    for part in path:
        node = node[part]
    if isinstance(node, dict):
        node[key if key is not None else next(iter(node), "x")] = value
    return data


def _train(path: Path, tmp_path: Path, target: str) -> None:
    """``attnkit train path``: accepted (the stub ran) or refused in one line naming ``path``."""
    run = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", str(path), "-o", str(run)])
    if result.exit_code == 0:
        assert "STUB-TRAINED" in result.output, result.output
        record(target, "valid config")
        return
    message = result.stderr.strip()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "--debug" not in message, message
    assert "\n" not in message and str(path) in message, message
    assert not run.exists()
    record(target, "exit 2, file named")


@pytest.fixture(autouse=True)
def _no_training(monkeypatch):
    for task in SHIPPED:
        stub = lambda self, cfg, out, **k: Trained(f"STUB-TRAINED {out}", {})  # noqa: E731
        monkeypatch.setattr(type(app_named(task)), "train", stub)


@FUZZ
@given(text=st.text(max_size=300))
def test_arbitrary_text_as_a_config(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("cfg") / "fuzz.yaml"
    path.write_text(text, encoding="utf-8")
    _train(path, path.parent, "config: any text")


@FUZZ
@given(
    task=st.sampled_from(sorted(SHIPPED)),
    where=st.integers(0, 200),
    key=st.none() | st.text(max_size=8),
    value=VALUES,
)
def test_a_shipped_config_with_a_random_value_anywhere(tmp_path_factory, task, where, key, value):
    data = yaml.safe_load(SHIPPED[task].read_text(encoding="utf-8"))
    paths = [p for p in _paths(data) if isinstance(_get(data, p), dict)]
    bad = _put(data, paths[where % len(paths)], key, value)
    path = tmp_path_factory.mktemp("cfg") / "fuzz.yaml"
    path.write_text(yaml.safe_dump(bad, allow_unicode=True), encoding="utf-8")
    _train(path, path.parent, "config: shipped, mutated")


def _get(data, path):
    for part in path:
        data = data[part]
    return data
