"""Config fuzzing through the command line: valid configs of every task, mutated (wrong types,
out-of-range values, unknown, missing and duplicated keys, an empty file, bad --set options),
must each be refused by `attnkit train` with exit code 2 and one line naming the file and the
field, no traceback, and no run directory left behind. Training itself is replaced by a
function that fails the test, so a mutation that slips through cannot start a run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from attnkit.apps import TASKS, app_named
from attnkit.cli import app

ROOT = Path(__file__).resolve().parents[1]
VALID = {  # one shipped config per task
    "translation": ROOT / "src/attnkit/apps/translation/configs/demo-bahdanau.yaml",
    "text-classification": ROOT / "configs/rationales-bigru.yaml",
    "image-classification": ROOT / "configs/digits-vit.yaml",
    "anomaly-detection": ROOT / "configs/solar-transformer.yaml",
    "captioning": ROOT / "configs/scenes-soft-small.yaml",
    "segmentation": ROOT / "configs/shapes-attention-unet.yaml",
    "stocks": ROOT / "configs/stocks-alpha-t-rim.yaml",
    "im2latex": ROOT / "configs/formulas-im2latex.yaml",
    "language-model": ROOT / "configs/shakespeare-gpt-cpu.yaml",
    "speech": ROOT / "configs/fsdd-las.yaml",
    "recommendation": ROOT / "configs/sasrec-games.yaml",
    "summarization": ROOT / "configs/scitldr-pointer-generator.yaml",
}
RANGES = [  # (section, key, a value out of range) for the engine's shared train settings
    ("train", "epochs", 0),
    ("train", "learning_rate", -0.001),
    ("train", "learning_rate", float("nan")),
    ("train", "betas", [0.9]),
    ("train", "clip_norm", -1.0),
    ("train", "update_freq", 0),
]


def _leaves(data: dict, path=()):
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*path, key))
        else:
            yield (*path, key), value


def _set(data: dict, path: tuple, value) -> dict:
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


def mutations(text: str, rng: random.Random):
    """``(description, yaml text, the field the error must name)`` for one valid config."""
    data = yaml.safe_load(text)
    for path, value in _leaves(data):
        if isinstance(value, bool):
            yield f"{path} a string", _set(yaml.safe_load(text), path, "maybe"), path[-1]
        elif isinstance(value, int | float):
            yield f"{path} a string", _set(yaml.safe_load(text), path, "lots"), path[-1]
        elif isinstance(value, list) and value and all(isinstance(v, int | float) for v in value):
            yield f"{path} a mapping", _set(yaml.safe_load(text), path, {"a": 1}), path[-1]
    for path in [(), *(p[:-1] for p, _ in _leaves(data) if len(p) > 1)]:
        bad = yaml.safe_load(text)
        node = bad
        for key in path:
            node = node[key]
        node["no_such_key"] = 1
        yield f"unknown key in {path or 'top level'}", bad, "no_such_key"
    for section, key, value in RANGES:
        if isinstance(data.get(section), dict):
            bad = yaml.safe_load(text)
            bad[section][key] = value
            yield f"{section}.{key} = {value}", bad, key
    for section in getattr(_config_class(data), "__required__", ()):
        bad = yaml.safe_load(text)
        bad.pop(section, None)
        yield f"no {section}", bad, section
    lines = [i for i, line in enumerate(text.splitlines()) if line.strip() and line[0] not in " #"]
    i = rng.choice(lines)
    duplicated = text.splitlines()
    duplicated.insert(i + 1, duplicated[i])
    key = duplicated[i].split(":")[0]
    yield f"duplicate {key}", "\n".join(duplicated) + "\n", key
    yield "empty file", "", "empty"


def _config_class(data: dict):
    task = data.get("task", "translation")
    return type(app_named(task).load_config(VALID[task]))


@pytest.mark.parametrize("task", sorted(VALID))
def test_every_mutation_is_refused_in_one_line(task, tmp_path, monkeypatch):
    assert set(VALID) == set(TASKS)

    def must_not_train(*args, **kwargs):
        raise AssertionError("a bad config was accepted and training started")

    monkeypatch.setattr(type(app_named(task)), "train", must_not_train)
    text = VALID[task].read_text(encoding="utf-8")
    runner, rng, checked = CliRunner(), random.Random(0), 0
    for what, bad, field in mutations(text, rng):
        path = tmp_path / "bad.yaml"
        path.write_text(bad if isinstance(bad, str) else yaml.safe_dump(bad), encoding="utf-8")
        result = runner.invoke(app, ["train", str(path), "-o", str(tmp_path / "run")])
        message = result.stderr.strip()
        assert result.exit_code == 2, (what, result.output)
        assert "\n" not in message and "Traceback" not in result.output, (what, message)
        assert str(path) in message and field in message, (what, message)
        assert not (tmp_path / "run").exists(), what
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("train.epochs=0", ["--set train.epochs=0", "train.epochs"]),
        ("train.epoch=3", ["--set train.epoch=3", "unknown key 'epoch'"]),
        ("train.epochs", ["--set train.epochs", "KEY=VALUE"]),
        ("train.learning_rate=fast", ["--set train.learning_rate=fast", "learning_rate"]),
    ],
)
def test_bad_set_options_name_the_option(option, words, tmp_path):
    config = VALID["translation"]
    result = CliRunner().invoke(
        app, ["train", str(config), "-o", str(tmp_path / "r"), "--set", option]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    for word in words:
        assert word in result.stderr, result.stderr
    assert not (tmp_path / "r").exists()
