"""Typed YAML config: unknown keys, wrong types and bad choices name the file and line."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from attnkit.config import ConfigError, from_dict, load_yaml, save_yaml


@dataclass
class Train:
    learning_rate: float = 1e-3
    optimiser: Literal["adam", "adamw"] = "adam"
    epochs: int = 10


@dataclass
class Experiment:
    name: str
    train: Train = field(default_factory=Train)
    layers: list[int] = field(default_factory=lambda: [1])
    data_dir: Path | None = None


def write(tmp_path, text):
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_round_trip_and_types(tmp_path):
    path = write(tmp_path, "name: demo\ntrain:\n  learning_rate: 5e-4\nlayers: [2, 3]\n")
    cfg = load_yaml(Experiment, path)
    assert cfg == Experiment("demo", Train(learning_rate=5e-4), [2, 3], None)
    save_yaml(cfg, tmp_path / "again.yaml")
    assert load_yaml(Experiment, tmp_path / "again.yaml") == cfg


def test_unknown_key_names_file_line_section_and_suggests(tmp_path):
    path = write(tmp_path, "name: demo\ntrain:\n  epochs: 3\n  lerning_rate: 0.1\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(Experiment, path)
    message = str(err.value)
    assert message.startswith(f"{path}, line 4: unknown key 'lerning_rate' in section 'train'")
    assert "did you mean 'learning_rate'" in message


def test_bad_choice_and_type(tmp_path):
    with pytest.raises(ConfigError, match=r"line 3: train.optimiser is 'sgd'; choose one of"):
        load_yaml(Experiment, write(tmp_path, "name: x\ntrain:\n  optimiser: sgd\n"))
    with pytest.raises(ConfigError, match=r"line 3: train.epochs must be int, got 'ten'"):
        load_yaml(Experiment, write(tmp_path, "name: x\ntrain:\n  epochs: ten\n"))
    with pytest.raises(ConfigError, match="needs \\['name'\\]"):
        load_yaml(Experiment, write(tmp_path, "layers: [1]\n"))


def test_file_problems(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_yaml(Experiment, tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match=r"line 2: invalid YAML"):
        load_yaml(Experiment, write(tmp_path, "name: x\n  bad: [\n"))
    (tmp_path / "bin.yaml").write_bytes(b"name: \xff\n")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        load_yaml(Experiment, tmp_path / "bin.yaml")


def test_from_dict_without_file():
    with pytest.raises(ConfigError, match="unknown key 'epoch' in section 'train'"):
        from_dict(Experiment, {"name": "x", "train": {"epoch": 1}})
