"""What one request may send and one connection may hold, and the refusal every route raises.

A server's :class:`Limits` (defaults in :data:`LIMITS`): ``max_chars`` characters of a typed
input, a JSON body of at most ``max_body`` bytes and an uploaded file of at most
``max_upload`` (413 beyond), numbers of at most ``max_digits`` digits (longer ones are kept as
:class:`LongNumber`, which no field accepts, so the message names the field), JSON nested no
deeper than Python's parser recurses, ``timeout`` seconds of silence from a client that is
sending a request (it is then dropped), at most ``max_connections`` connections at once (the
next is answered 503 and closed) and at most ``max_weights`` attention weights in one answer.
A request beyond a limit is refused with :class:`RequestError`, answered as JSON
``{"error": "FIELD: what is wrong", "status": N}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """A server's limits (see the module docstring for what each one bounds)."""

    max_chars: int = 500  # characters of a typed input (after joining it into one line)
    max_body: int = 64 * 1024  # bytes of a JSON body
    max_upload: int = 8 << 20  # bytes of an uploaded file (an image, a CSV)
    max_digits: int = 20  # digits of one JSON number
    timeout: float = 5.0  # seconds a client sending a request may stay silent
    max_connections: int = 32  # connections served at once
    max_weights: int = 500_000  # attention weights in one answer

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"Limits.{spec.name} must be a positive number, got {value!r}")

    def as_dict(self) -> dict:
        return {spec.name: getattr(self, spec.name) for spec in fields(self)}


LIMITS = Limits()


class RequestError(ValueError):
    """A bad request; ``status`` is the HTTP status to answer with (400 by default) and
    ``headers`` extra response headers (``Allow`` with a 405)."""

    def __init__(self, message: str, status: int = 400, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


@dataclass(frozen=True)
class LongNumber:
    """A JSON number with more than ``Limits.max_digits`` digits, kept as its length only (a
    5,000-digit integer would exceed Python's int conversion limit)."""

    digits: int

    def __repr__(self) -> str:
        return f"a number of {self.digits} digits"


def shown(value: object, width: int = 40) -> str:
    """``value`` for a message: ASCII (lone surrogates escaped) and at most ``width`` chars."""
    text = ascii(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def load_json(raw: bytes, limits: Limits = LIMITS) -> object:
    """Decode a request body: UTF-8 JSON with no over-long number; else a 400 naming ``body``.

    Lone surrogates (``"\\ud800"``) decode to a ``str`` that cannot be encoded: the field's
    own check refuses them (:func:`checked_text`).
    """

    def number(kind):
        def parse(literal: str):
            digits = sum(c.isdigit() for c in literal)
            return LongNumber(digits) if digits > limits.max_digits else kind(literal)

        return parse

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        message = f"body: malformed JSON: not UTF-8 ({err.reason} at byte {err.start})"
        raise RequestError(message) from None
    try:
        return json.loads(
            text, parse_int=number(int), parse_float=number(float), parse_constant=_constant
        )
    except json.JSONDecodeError as err:
        raise RequestError(f"body: malformed JSON: {err}") from None
    except RecursionError:
        raise RequestError("body: JSON nested too deeply (send a flat object)") from None


def _constant(name: str):
    raise RequestError(f"body: malformed JSON: {name} is not a JSON number")


def checked_text(text: object, max_chars: int, name: str = "text") -> str:
    """``text`` as one line (runs of white space become one space), non-empty, at most
    ``max_chars`` characters and valid Unicode (no lone surrogate from a ``"\\ud800"``)."""
    if not isinstance(text, str):
        raise RequestError(f"{name}: must be a string, got {shown(text)}")
    text = " ".join(text.split())
    if not text:
        raise RequestError(f"{name}: empty; type something to show")
    if len(text) > max_chars:
        raise RequestError(f"{name}: {len(text)} characters; the limit is {max_chars}")
    for i, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            raise RequestError(
                f"{name}: character {i} is a lone surrogate ({shown(char)}), not a Unicode "
                "character; send valid UTF-16 pairs or UTF-8"
            )
    return text


def checked_body(body: object, allowed: tuple[str, ...], example: str) -> dict:
    """``body`` as a JSON object of ``allowed`` fields only; else a 400 naming ``body``."""
    if not isinstance(body, dict):
        raise RequestError(f"body: expected a JSON object like {example}")
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        names = ", ".join(shown(name) for name in unknown[:5])
        raise RequestError(f"body: unknown field(s) {names}; allowed: {', '.join(allowed)}")
    return body
