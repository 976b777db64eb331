"""The ``POST /api/translate`` body, checked field by field against
:class:`~.limits.ExplorerLimits`.

``{"text": str, "beam": int, "n_best": int, "layers": [int], "heads": [int]}``; only ``text``
is required. ``beam`` defaults to the run's ``decode.beam_size`` (capped at the limit),
``n_best`` to as many hypotheses as fit the answer (at most ``min(beam, max_n_best)``),
``layers`` and ``heads`` to all of the model's. Every refusal is a
:class:`~.limits.RequestError` whose message starts with the field at fault.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnkit.apps.translation.explorer.limits import LIMITS, ExplorerLimits, RequestError, shown
from attnkit.server.limits import checked_body, checked_text

FIELDS = ("text", "beam", "n_best", "layers", "heads")


@dataclass
class Request:
    """A validated ``/api/translate`` body (None: the default, see the module docstring)."""

    text: str
    beam: int
    n_best: int | None = None
    layers: tuple[int, ...] | None = None
    heads: tuple[int, ...] | None = None


def parse_request(body: object, limits: ExplorerLimits = LIMITS, default_beam: int = 1, shape=None):
    """Check a decoded JSON body; ``shape`` (:class:`~.budget.AttentionShape`) says which
    ``layers`` and ``heads`` the model has (None: no attention to choose from)."""
    body = checked_body(body, FIELDS, '{"text": "...", "beam": 1}')
    text = checked_text(body.get("text"), limits.max_chars)
    beam = whole(body, "beam", default_beam, limits.max_beam)
    n_best = whole(body, "n_best", None, limits.max_n_best)
    if n_best is not None and n_best > beam:
        raise RequestError(f"n_best: at most the beam ({beam}), got {n_best}")
    layers = indices(body, "layers", shape.layers if shape else 0, "layer")
    heads = indices(body, "heads", shape.heads if shape else 0, "head")
    return Request(text, beam, n_best, layers, heads)


def whole(body: dict, name: str, default: int | None, most: int) -> int | None:
    """``body[name]``: a whole number from 1 to ``most`` (``default`` when absent)."""
    value = body.get(name, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{name}: must be a whole number from 1 to {most}, got {shown(value)}")
    if value < 1:
        raise RequestError(f"{name}: at least 1, got {value}")
    if value > most:
        raise RequestError(f"{name}: at most {most}, got {value}")
    return value


def indices(body: dict, name: str, count: int, what: str) -> tuple[int, ...] | None:
    """``body[name]``: a non-empty list of distinct ``what`` numbers from 0 to ``count - 1``."""
    value = body.get(name)
    if value is None:
        return None
    if count == 0:
        raise RequestError(f"{name}: this model's attention has no {what}s to choose; leave out")
    if not isinstance(value, list) or not value:
        raise RequestError(
            f"{name}: must be a non-empty list of {what} numbers, got {shown(value)}"
        )
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < count:
            raise RequestError(
                f"{name}: each must be a {what} number from 0 to {count - 1}, got {shown(item)}"
            )
    if len(set(value)) < len(value):
        raise RequestError(f"{name}: each {what} at most once, got {shown(value)}")
    return tuple(value)
