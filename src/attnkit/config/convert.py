"""Plain YAML data to typed dataclasses: every key and value checked against the fields' types
and bounds (:mod:`attnkit.config.bounds`), every error a :class:`ConfigError` naming the file,
line and field (:class:`_Where`)."""

from __future__ import annotations

import dataclasses
import difflib
import types
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

from attnkit.config.bounds import field_problem

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration problem, with the file, line and key it is about."""


class _Where:
    """Locates keys in the YAML source so errors can name the line."""

    def __init__(self, source: str | None, text: str | None, overrides: dict | None = None):
        self.source = source or "<config>"
        self.lines: dict[tuple[str, ...], int] = {}
        self.overrides: dict[tuple[str, ...], str] = overrides or {}  # path -> "--set k=v"
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
        if path in self.overrides:
            return ConfigError(f"{self.source}, {self.overrides[path]}: {message}")
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
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                raise where.error(path, f"{field} must list {len(args)} values, got {len(value)}")
            return tuple(_convert(v, a, path, where) for v, a in zip(value, args, strict=True))
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
    if hint is date:
        return _date(value, path, where)
    name = getattr(hint, "__name__", str(hint))
    raise where.error(path, f"{field} must be {name}, got {value!r}")


def _date(value: Any, path: tuple[str, ...], where: _Where) -> date:
    """A day: YAML's unquoted ``2019-06-30``, or the same text quoted; a time of day is not
    one."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise where.error(path, f"{'.'.join(path)} must be a date (YYYY-MM-DD), got {value!r}")


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
    for key in getattr(cls, "__required__", ()):
        if key not in data:
            raise where.error(path, f"section '{'.'.join((*path, key))}' is required but missing")
    kwargs = {}
    for key, value in data.items():  # each value typed, then checked against its bounds
        kwargs[key] = _convert(value, hints[key], (*path, key), where)
        problem = field_problem(cls, key, kwargs[key])
        if problem:
            raise where.error((*path, key), f"{'.'.join((*path, key))} {problem}")
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
        named = str(err).split(" ", 1)[0].split(".")[-1]
        if named in fields:  # "epochs must be at least 1, got 0": point at that field's line
            line_path = (*path, named) if named in data else path
            dotted = ".".join((*path, named))
            raise where.error(
                line_path, dotted + str(err)[len(str(err).split(" ", 1)[0]) :]
            ) from err
        raise where.error(path, f"in section '{_section(path)}': {err}") from err
    return obj
