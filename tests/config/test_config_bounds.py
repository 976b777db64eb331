"""Field bounds (``attnkit.config.bounded``): each kind of bound, broken in a shipped config,
is refused by the loader with the file, the line (or the ``--set`` option) and the field; the
same bounds hold when a config dataclass is built in code."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from attnkit.apps.captioning.config import load_experiment as load_captioning
from attnkit.apps.classification.config import ClassifierTrainConfig
from attnkit.apps.im2latex.config import load_config as load_im2latex
from attnkit.apps.vision.config import ImageTrainConfig
from attnkit.apps.vision.config import load_config as load_vision
from attnkit.config import Bounds, ConfigError, bounded, from_dict

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
VISION, CAPTIONS, FORMULAS = "digits-vit.yaml", "scenes-soft-small.yaml", "formulas-im2latex.yaml"


def _broken(tmp_path: Path, name: str, section: str, key: str, value: str) -> tuple[Path, int]:
    """The shipped config ``name`` with ``section.key: value`` (replaced where the file sets
    it, else added under the section), written to ``tmp_path``; and that line's number."""
    lines = (CONFIGS / name).read_text(encoding="utf-8").splitlines()
    start = lines.index(f"{section}:")
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"\S", lines[i])), len(lines))
    found = [i for i in range(start + 1, end) if lines[i].startswith(f"  {key}:")]
    if found:
        lines[found[0]] = f"  {key}: {value}"
    else:
        lines.insert(start + 1, f"  {key}: {value}")
    line = found[0] if found else start + 1
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, line + 1


CASES = [  # (kind, config, loader, section, key, bad value, the message after the field)
    ("min", VISION, load_vision, "train", "epochs", "0", "must be at least 1, got 0"),
    ("min 0", VISION, load_vision, "train", "max_shift", "-1", "must be at least 0, got -1"),
    ("open min", VISION, load_vision, "train", "learning_rate", "-0.1", "must be finite and "
     "positive, got -0.1"),
    ("finite", VISION, load_vision, "train", "learning_rate", ".inf", "must be finite and "
     "positive, got inf"),
    ("max, closed", VISION, load_vision, "train", "max_rotation", "180.5",
     "must be in [0, 180], got 180.5"),
    ("max, closed at 0.5", FORMULAS, load_im2latex, "data", "noise", "0.6",
     "must be in [0, 0.5], got 0.6"),
    ("max, open", VISION, load_vision, "train", "label_smoothing", "1.0",
     "must be in [0, 1), got 1.0"),
    ("open range, low end", VISION, load_vision, "data", "test_size", "0.0",
     "must be in (0, 1), got 0.0"),
    ("open range, high end", VISION, load_vision, "data", "test_size", "1",
     "must be in (0, 1), got 1.0"),
    ("NaN", VISION, load_vision, "train", "weight_decay", ".nan", "must be at least 0, got nan"),
    ("each value", VISION, load_vision, "train", "betas", "[0.9, 1.0]",
     "must all be in [0, 1), got [0.9, 1.0]"),
    ("choices", CAPTIONS, load_captioning, "data", "max_objects", "4",
     "must be 2 or 3, got 4"),
    ("inside: a choice", FORMULAS, load_im2latex, "train", "bf16", "false", None),
    ("inside: a closed end", VISION, load_vision, "train", "max_rotation", "180", None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "name", "load", "section", "key", "value", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_a_broken_bound_names_file_line_and_field(
    tmp_path, kind, name, load, section, key, value, message
):
    path, line = _broken(tmp_path, name, section, key, value)
    if message is None:  # a value inside the bounds loads
        load(path)
        return
    with pytest.raises(ConfigError) as err:
        load(path)
    assert str(err.value) == f"{path}, line {line}: {section}.{key} {message}"


def test_a_set_option_meets_the_same_bounds():
    path = CONFIGS / VISION
    with pytest.raises(ConfigError) as err:
        load_vision(path, ["train.max_rotation=200"])
    assert str(err.value) == (
        f"{path}, --set train.max_rotation=200: train.max_rotation must be in [0, 180], got 200.0"
    )
    with pytest.raises(ConfigError, match=r"--set data.max_objects=1: data.max_objects must be"):
        load_captioning(CONFIGS / CAPTIONS, ["data.max_objects=1"])
    assert load_vision(path, ["train.max_rotation=180"]).train.max_rotation == 180.0


def test_bounds_hold_when_built_in_code_and_survive_a_new_default():
    with pytest.raises(ValueError, match=r"^max_scale must be in \[0, 1\), got 1.0$"):
        ImageTrainConfig(max_scale=1.0)
    # ClassifierTrainConfig gives epochs a new default (3): the engine's bound (>= 1) stays
    with pytest.raises(ValueError, match="^epochs must be at least 1, got 0$"):
        ClassifierTrainConfig(epochs=0)
    with pytest.raises(ConfigError, match="^x.yaml: epochs must be at least 1, got 0$"):
        from_dict(ClassifierTrainConfig, {"epochs": 0}, source="x.yaml")


@pytest.mark.parametrize(
    ("bounds", "inside", "outside", "words"),
    [
        (Bounds(ge=1), [1, 10**9], [0, -1], "at least 1"),
        (Bounds(gt=0), [1e-9, math.inf], [0, -1e-9, math.nan], "positive"),
        (Bounds(gt=2), [2.5], [2], "greater than 2"),
        (Bounds(le=5), [5, -3], [5.5], "at most 5"),
        (Bounds(lt=5), [4.9], [5], "below 5"),
        (Bounds(ge=0, le=1), [0, 1], [-0.1, 1.1], "in [0, 1]"),
        (Bounds(gt=0, lt=1), [0.5], [0, 1], "in (0, 1)"),
        (Bounds(gt=0, finite=True), [1.0], [math.inf, math.nan, 0], "finite and positive"),
        (Bounds(finite=True), [-1e300], [math.inf, -math.inf], "finite"),
        (Bounds(choices=(True, False, "auto")), [True, "auto"], [1, "yes"], "true, false or auto"),
    ],
)
def test_each_kind_of_bound(bounds, inside, outside, words):
    assert bounds.describe() == words
    for value in inside:
        assert bounds.problem(value) is None, value
    for value in outside:
        assert bounds.problem(value) == f"must be {words}, got {value!r}", value
    assert bounds.problem(None) is None  # an optional field left unset


def test_the_loader_checks_bounds_of_any_dataclass(tmp_path):
    @dataclass
    class Section:  # a plain dataclass: no Checked base, the loader checks it all the same
        rate: float = bounded(0.5, gt=0, le=1)
        sizes: list[int] = bounded(factory=lambda: [1, 2], ge=0)

    assert Section().sizes == [1, 2] and Section().sizes is not Section().sizes
    with pytest.raises(ConfigError, match=r"^c.yaml: rate must be in \(0, 1\], got 2.0$"):
        from_dict(Section, {"rate": 2}, source="c.yaml")
    with pytest.raises(ConfigError, match=r"sizes must all be at least 0, got \[1, -2\]"):
        from_dict(Section, {"sizes": [1, -2]})
