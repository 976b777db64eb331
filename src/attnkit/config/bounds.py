"""Declarative bounds on config fields, checked by the loader and when a dataclass is built.

A field says its range once, in its declaration::

    dropout: float = bounded(0.1, ge=0, lt=1)  # [0, 1)
    learning_rate: float = bounded(1e-3, gt=0, finite=True)  # finite and positive
    max_objects: int = bounded(3, choices=(2, 3))
    betas: tuple[float, float] = bounded((0.9, 0.98), ge=0, lt=1)  # each value in [0, 1)

``ge``/``gt`` are the inclusive/exclusive lower end, ``le``/``lt`` the upper one (pydantic's
names); ``None`` passes (an optional field unset), a list or tuple is checked value by value,
and NaN is never inside a range; a subclass that only changes a field's default keeps its
bounds. :func:`~attnkit.config.convert._build` checks every value it
reads against these bounds, so the error names the file and line (or the ``--set`` option) and
the field: ``c.yaml, line 7: model.dropout must be in [0, 1), got 1.5``. A dataclass that
derives from :class:`Checked` checks them again when built in code, then runs its ``check``
hook (the rules that tie one field to another).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

BOUNDS = "bounds"  # the field-metadata key


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The values one field accepts: a range (either end open, closed or absent), finiteness
    and/or a set of choices."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    finite: bool = False
    choices: tuple | None = None

    def describe(self) -> str:
        """``"in [0, 1)"``, ``"at least 1"``, ``"finite and positive"``, ``"2 or 3"``..."""
        if self.choices is not None:
            *first, last = [_yaml(c) for c in self.choices]
            return f"{', '.join(first)} or {last}" if first else last
        low = self.ge if self.ge is not None else self.gt
        high = self.le if self.le is not None else self.lt
        if low is not None and high is not None:
            left, right = "[" if self.ge is not None else "(", "]" if self.le is not None else ")"
            text = f"in {left}{_n(low)}, {_n(high)}{right}"
        elif low is not None:
            text = f"at least {_n(low)}" if self.ge is not None else _above(low)
        elif high is not None:
            text = f"at most {_n(high)}" if self.le is not None else f"below {_n(high)}"
        else:
            return "finite" if self.finite else "anything"
        return f"finite and {text}" if self.finite else text

    def admits(self, value: Any) -> bool:
        """Whether one value (not a list) is inside these bounds."""
        if self.choices is not None:
            return any(value == c and type(value) is type(c) for c in self.choices)
        if isinstance(value, float) and math.isnan(value):
            return False
        if self.finite and isinstance(value, float) and not math.isfinite(value):
            return False
        return not (
            (self.ge is not None and value < self.ge)
            or (self.gt is not None and value <= self.gt)
            or (self.le is not None and value > self.le)
            or (self.lt is not None and value >= self.lt)
        )

    def problem(self, value: Any) -> str | None:
        """``"must be in [0, 1), got 1.5"`` when ``value`` breaks these bounds, else None."""
        if value is None:
            return None
        if isinstance(value, list | tuple):
            if all(self.admits(v) for v in value):
                return None
            return f"must all be {self.describe()}, got {list(value)}"
        if self.admits(value):
            return None
        return f"must be {self.describe()}, got {value!r}"


def _yaml(choice: Any) -> str:
    """A choice as it is written in YAML: ``true``, ``auto``, ``3``."""
    return str(choice).lower() if isinstance(choice, bool) else str(choice)


def _above(low: float) -> str:
    return "positive" if low == 0 else f"greater than {_n(low)}"


def _n(x: float) -> str:
    """A bound as written: integers exactly (2**32 as 4294967296), others short (0.1)."""
    return str(x) if isinstance(x, int) else f"{x:g}"


def bounded(
    default: Any = dataclasses.MISSING,
    *,
    factory: Callable[[], Any] | None = None,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    finite: bool = False,
    choices: tuple | None = None,
) -> Any:
    """A dataclass field with ``default`` (or ``factory``) whose values must lie within the
    bounds: ``ge``/``gt`` (>= / >) and ``le``/``lt`` (<= / <), ``finite``, ``choices``."""
    bounds = Bounds(ge, gt, le, lt, finite, tuple(choices) if choices is not None else None)
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={BOUNDS: bounds})
    return dataclasses.field(default=default, metadata={BOUNDS: bounds})


@functools.cache
def bounds_of(cls: type, name: str) -> Bounds | None:
    """The bounds of field ``name`` of dataclass ``cls``; a subclass that gives the field only
    a new default (``epochs: int = 3``) keeps its base class' bounds."""
    for klass in cls.__mro__:
        field = getattr(klass, "__dataclass_fields__", {}).get(name)
        if field is not None and BOUNDS in field.metadata:
            return field.metadata[BOUNDS]
    return None


def field_problem(cls: type, name: str, value: Any) -> str | None:
    """What is wrong with ``value`` for field ``name`` of ``cls`` (``"must be ..."``), or None."""
    bounds = bounds_of(cls, name)
    return bounds.problem(value) if bounds is not None else None


def check_bounds(obj: Any) -> None:
    """Raise ``ValueError("NAME must be ..., got ...")`` for the first field of the dataclass
    ``obj`` outside its bounds."""
    for field in dataclasses.fields(obj):
        problem = field_problem(type(obj), field.name, getattr(obj, field.name))
        if problem:
            raise ValueError(f"{field.name} {problem}")


class Checked:
    """A config dataclass base: building one (in code or by the loader) checks every field's
    bounds, then :meth:`check`, where a subclass tests what ties its fields together."""

    def __post_init__(self) -> None:
        check_bounds(self)
        self.check()

    def check(self) -> None:
        """Rules between fields; raise ``ValueError("FIELD ...")`` naming the field first, so
        the loader can point at its line."""
