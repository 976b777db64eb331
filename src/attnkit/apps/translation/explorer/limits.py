"""The explorer's limits: what one request may ask for, and what one connection may hold.

Every limit is a field of :class:`Limits` (defaults below, in :data:`LIMITS`); a server takes
its own (``make_server(..., limits=Limits(timeout=2.0))``). A request beyond a limit is refused
with a JSON 400 whose message starts with the field at fault, e.g. ``"beam: at most 16, got
17"``. What multiplies the size of an answer, and the limit on each:

========================  =====================================================================
``text``                  ``max_chars`` characters (500): the source length ``S`` in pieces
``beam``                  ``max_beam`` (16), and ``beam`` × the weights one hypothesis records
                          during the search at most ``max_search_weights`` (4,000,000, 16 MB
                          of float32): a long text gets a smaller largest beam
``n_best``                ``max_n_best`` hypotheses returned (4), each with its attention
``layers``, ``heads``     a subset of the model's own (default: all); nothing beyond them
the answer's attention    at most ``max_weights`` weights in all (500,000; about 9 bytes each
                          in the JSON, so an answer is at most about 5 MB), the best
                          hypothesis counted twice (it is also the top level). Without an
                          explicit ``n_best``, as many hypotheses are returned as fit; with
                          one, or when even the best hypothesis does not fit, the request is
                          refused
========================  =====================================================================

Transport limits: a POST body of at most ``max_body`` bytes (64 KiB; 413 beyond), numbers of
at most ``max_digits`` digits (longer ones are kept as :class:`LongNumber`, which no field
accepts, so the message names the field), JSON nested no deeper than Python's parser recurses
(a request is a flat object), a request line and header lines of at most 65,536 bytes and 100
headers (the standard library's limits; 414 / 431), ``timeout`` seconds (5) for each read or
write on a connection (a stalled client is dropped and its thread freed), and at most
``max_connections`` connections served at once (32; the next one is answered 503 and closed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """The explorer's limits (see the module docstring for what each one bounds)."""

    max_chars: int = 500  # characters of "text" (after joining it into one line)
    max_beam: int = 16  # "beam": 1 (greedy) to this
    max_n_best: int = 4  # "n_best": hypotheses returned, each with its attention and steps
    max_weights: int = 500_000  # attention weights in one answer, all hypotheses together
    max_search_weights: int = 4_000_000  # beam x weights one hypothesis records in the search
    max_body: int = 64 * 1024  # bytes of a POST body
    max_digits: int = 20  # digits of one JSON number
    timeout: float = 5.0  # seconds for each read or write on a connection
    max_connections: int = 32  # connections served at once

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
    own check refuses them (:func:`.request.checked_text`).
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
