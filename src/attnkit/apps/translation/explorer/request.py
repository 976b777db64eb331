"""The ``POST /api/translate`` body, checked field by field against :class:`~.limits.Limits`.

``{"text": str, "beam": int, "n_best": int, "layers": [int], "heads": [int]}``; only ``text``
is required. ``beam`` defaults to the run's ``decode.beam_size`` (capped at the limit),
``n_best`` to as many hypotheses as fit the answer (at most ``min(beam, max_n_best)``),
``layers`` and ``heads`` to all of the model's. Every refusal is a
:class:`~.limits.RequestError` whose message starts with the field at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from attnkit.apps.translation.explorer.limits import LIMITS, Limits, RequestError, shown

FIELDS = ("text", "beam", "n_best", "layers", "heads")
SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Request:
    """A validated ``/api/translate`` body (None: the default, see the module docstring)."""

    text: str
    beam: int
    n_best: int | None = None
    layers: tuple[int, ...] | None = None
    heads: tuple[int, ...] | None = None


def parse_request(body: object, limits: Limits = LIMITS, default_beam: int = 1, shape=None):
    """Check a decoded JSON body; ``shape`` (:class:`~.budget.AttentionShape`) says which
    ``layers`` and ``heads`` the model has (None: no attention to choose from)."""
    if not isinstance(body, dict):
        raise RequestError('body: expected a JSON object like {"text": "...", "beam": 1}')
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        names = ", ".join(shown(name) for name in unknown[:5])
        raise RequestError(f"body: unknown field(s) {names}; allowed: {', '.join(FIELDS)}")
    text = checked_text(body.get("text"), limits.max_chars)
    beam = whole(body, "beam", default_beam, limits.max_beam)
    n_best = whole(body, "n_best", None, limits.max_n_best)
    if n_best is not None and n_best > beam:
        raise RequestError(f"n_best: at most the beam ({beam}), got {n_best}")
    layers = indices(body, "layers", shape.layers if shape else 0, "layer")
    heads = indices(body, "heads", shape.heads if shape else 0, "head")
    return Request(text, beam, n_best, layers, heads)


def checked_text(text: object, max_chars: int) -> str:
    """``text`` as one line (runs of white space become one space), non-empty, at most
    ``max_chars`` characters and valid Unicode (no lone surrogate from a ``"\\ud800"``)."""
    if not isinstance(text, str):
        raise RequestError(f"text: must be a string, got {shown(text)}")
    text = " ".join(text.split())
    if not text:
        raise RequestError("text: empty; type a sentence to translate")
    if len(text) > max_chars:
        raise RequestError(f"text: {len(text)} characters; the limit is {max_chars}")
    bad = SURROGATE.search(text)
    if bad:
        raise RequestError(
            f"text: character {bad.start()} is a lone surrogate ({shown(bad.group())}), not a "
            "Unicode character; send valid UTF-16 pairs or UTF-8"
        )
    return text


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
