"""Reading a YAML config once into its typed dataclass, with ``--set`` overrides.

Errors are :class:`~attnkit.config.convert.ConfigError` naming the file and line (or the
``--set`` option) and the field: an empty file, a key given twice, invalid YAML or UTF-8, an
unknown key, a wrong type, a value out of range::

    configs/demo.yaml, line 7: unknown key 'lerning_rate' in section 'train'
    (did you mean 'learning_rate'?)
    configs/demo.yaml, --set train.epochs=0: train.epochs must be at least 1, got 0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml

from attnkit.config.convert import ConfigError, _build, _Where

T = TypeVar("T")


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise ConfigError(
                    f"line {key_node.start_mark.line + 1}: key {key!r} given twice (first on "
                    f"line {seen[key]}); remove one"
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)

    def construct_yaml_timestamp(self, node):
        """A date that is no day (``2019-02-30``) names its line (PyYAML raises a bare
        ValueError)."""
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as err:
            line = node.start_mark.line + 1
            raise ConfigError(f"line {line}: {node.value!r} is not a date ({err})") from None


_UniqueKeyLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", _UniqueKeyLoader.construct_yaml_timestamp
)


def read_yaml(path: str | Path) -> tuple[dict, str]:
    """The top-level mapping of the YAML file ``path`` and its text. An empty file, a key given
    twice, invalid YAML or UTF-8 and a top level that is not a mapping are errors."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not valid UTF-8 ({err.reason} at byte {err.start})") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    except ConfigError as err:
        raise ConfigError(f"{path}, {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}{line}: invalid YAML: {getattr(err, 'problem', err)}") from None
    if data is None:
        raise ConfigError(
            f"{path}: the config file is empty (it needs at least a name: and its sections)"
        )
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections")
    return data, text


def parse_overrides(overrides: Sequence[str]) -> list[tuple[tuple[str, ...], Any, str]]:
    """``["train.epochs=2", "model.cell=lstm"]`` -> ``[(("train", "epochs"), 2, "--set ...")]``;
    values are read as YAML (``2`` an int, ``[0.9, 0.98]`` a list, ``null`` None)."""
    parsed = []
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
            raise ConfigError(f"--set {item}: expected KEY=VALUE, e.g. --set train.epochs=2")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except (yaml.YAMLError, ValueError) as err:  # ValueError: a date that is no day
            raise ConfigError(f"--set {item}: the value is not valid YAML ({err})") from None
        parsed.append((tuple(key.strip().split(".")), value, f"--set {item}"))
    return parsed


def apply_overrides(data: dict, overrides: Sequence[str]) -> dict[tuple[str, ...], str]:
    """Write ``overrides`` into ``data`` (nested sections created); returns where each came
    from, so errors about them name the option."""
    where = {}
    for path, value, text in parse_overrides(overrides):
        node = data
        for depth, part in enumerate(path[:-1]):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{text}: {'.'.join(path[: depth + 1])} is not a section")
        node[path[-1]] = value
        where[path] = text
    return where


def load_yaml(cls: type[T], path: str | Path, overrides: Sequence[str] = ()) -> T:
    """Read the YAML file ``path`` into dataclass ``cls``, after ``overrides``
    (``"section.key=value"``); errors name the file and line, or the option."""
    data, text = read_yaml(path)
    sources = apply_overrides(data, overrides)
    return _build(cls, data, (), _Where(str(path), text, sources))


def from_dict(cls: type[T], data: dict | None, *, source: str | None = None) -> T:
    """Build dataclass ``cls`` from a plain mapping, checking keys and types."""
    return _build(cls, data or {}, (), _Where(source, None))


def to_dict(obj: Any) -> dict:
    """The dataclass as plain data (Paths as strings), ready for ``yaml.safe_dump``."""

    def plain(value):
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, tuple | list):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    return {k: plain(v) for k, v in dataclasses.asdict(obj).items()}


def save_yaml(obj: Any, path: str | Path) -> None:
    """Write the dataclass as YAML (the inverse of :func:`load_yaml`)."""
    Path(path).write_text(yaml.safe_dump(to_dict(obj), sort_keys=False), encoding="utf-8")
