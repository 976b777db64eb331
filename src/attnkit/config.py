"""Typed configuration: dataclasses with defaults, YAML at the edge.

:func:`load_yaml` reads a YAML file into a dataclass, checking every key and value against the
dataclass' fields and types. An unknown key, a wrong type or a value outside a ``Literal``'s
choices is a :class:`ConfigError` that names the file, the line and the section::

    configs/demo.yaml, line 7: unknown key 'lerning_rate' in section 'train'
    (did you mean 'learning_rate'?)
"""

from __future__ import annotations

import dataclasses
import difflib
import types
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration problem, with the file, line and key it is about."""


class _Where:
    """Locates keys in the YAML source so errors can name the line."""

    def __init__(self, source: str | None, text: str | None):
        self.source = source or "<config>"
        self.lines: dict[tuple[str, ...], int] = {}
        if text is not None:
            try:
                self._index(yaml.compose(text), ())
            except yaml.YAMLError:
                pass

    def _index(self, node, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = (*path, str(key_node.value))
                self.lines[key] = key_node.start_mark.line + 1
                self._index(value_node, key)

    def error(self, path: tuple[str, ...], message: str) -> ConfigError:
        line = self.lines.get(path)
        where = f"{self.source}, line {line}" if line else self.source
        return ConfigError(f"{where}: {message}")


def _section(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "top level"


def _convert(value: Any, hint: Any, path: tuple[str, ...], where: _Where) -> Any:
    origin, args = get_origin(hint), get_args(hint)
    field = ".".join(path)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        if value is None:
            raise where.error(path, f"{field} must not be null")
        last_error = None
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(value, option, path, where)
            except ConfigError as err:
                last_error = err
        raise last_error
    if origin is Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise where.error(path, f"{field} is {value!r}; choose one of {choices}")
        return value
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise where.error(path, f"section '{field}' must be a mapping, got {value!r}")
        return _build(hint, value, path, where)
    if origin in (list, tuple):
        if not isinstance(value, list | tuple):
            raise where.error(path, f"{field} must be a list, got {value!r}")
        item = args[0] if args else Any
        items = [_convert(v, item, path, where) for v in value]
        return items if origin is list else tuple(items)
    if origin is dict:
        if not isinstance(value, dict):
            raise where.error(path, f"{field} must be a mapping, got {value!r}")
        return dict(value)
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str):  # YAML 1.1 reads "1e-3" as a string
        try:
            return float(value)
        except ValueError:
            pass
    if hint in (int, str, bool) and type(value) is hint:
        return value
    if hint is Path and isinstance(value, str):
        return Path(value)
    name = getattr(hint, "__name__", str(hint))
    raise where.error(path, f"{field} must be {name}, got {value!r}")


def _build(cls: type[T], data: dict, path: tuple[str, ...], where: _Where) -> T:
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in fields:
            close = difflib.get_close_matches(str(key), fields, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            known = ", ".join(fields)
            raise where.error(
                (*path, str(key)),
                f"unknown key {key!r} in section '{_section(path)}'{hint}; known keys: {known}",
            )
    kwargs = {k: _convert(v, hints[k], (*path, k), where) for k, v in data.items()}
    try:
        obj = cls(**kwargs)
    except (TypeError, ValueError) as err:
        missing = [
            name
            for name, f in fields.items()
            if name not in data
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise where.error(path, f"section '{_section(path)}' needs {missing}") from err
        raise where.error(path, f"in section '{_section(path)}': {err}") from err
    return obj


def from_dict(cls: type[T], data: dict | None, *, source: str | None = None) -> T:
    """Build dataclass ``cls`` from a plain mapping, checking keys and types."""
    return _build(cls, data or {}, (), _Where(source, None))


def load_yaml(cls: type[T], path: str | Path) -> T:
    """Read the YAML file ``path`` into dataclass ``cls``; errors name the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not valid UTF-8 ({err.reason} at byte {err.start})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}{line}: invalid YAML: {getattr(err, 'problem', err)}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections")
    return _build(cls, data or {}, (), _Where(str(path), text))


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
