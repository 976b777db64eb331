"""User vectors for ``attnkit explain``: from a file (JSON, or one vector per line) or from
``--vector`` options. Bad input raises :class:`ExplainInputError`, whose one-line message names
the file and line (or the option)."""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class ExplainInputError(ValueError):
    """Bad user input (file, vectors, option); the message is one line naming where."""


@dataclass
class VectorInput:
    """Queries ``(Tq, D)``, keys ``(Tk, D)``, values ``(Tk, Dv)`` and their labels."""

    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    query_tokens: list[str]
    key_tokens: list[str]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_rows(rows: list[tuple[str, str]], source: str):
    """``(where, text)`` rows -> ``(vectors (T, D), tokens)``; a row may start with a token."""
    vectors, tokens, first = [], [], None
    for where, text in rows:
        fields = text.split("#", 1)[0].replace(",", " ").split()
        if not fields:
            continue  # blank line or comment
        token = None
        if not _is_number(fields[0]):
            token, fields = fields[0].rstrip(":"), fields[1:]
            if not fields:
                raise ExplainInputError(f"{where}: token {token!r} has no numbers after it")
        for field in fields:
            if not _is_number(field) or not np.isfinite(float(field)):
                raise ExplainInputError(f"{where}: {field!r} is not a finite number")
        if first is None:
            first = (where, len(fields))
        elif len(fields) != first[1]:
            earlier = first[0].removeprefix(f"{source}, ")  # "line 1", without the file name
            raise ExplainInputError(
                f"{where}: {len(fields)} numbers, but {earlier} has {first[1]} (ragged rows)"
            )
        vectors.append([float(f) for f in fields])
        tokens.append(token)
    if not vectors:
        raise ExplainInputError(f"{source}: no vectors found")
    return np.array(vectors), tokens


def _names(given, found: list, where: str, prefix: str) -> list[str]:
    """Labels: ``given`` (a list, or a string split at commas/spaces) else ``found`` tokens."""
    if given is None:
        return [t if t is not None else f"{prefix}{i + 1}" for i, t in enumerate(found)]
    names = given if isinstance(given, list) else str(given).replace(",", " ").split()
    if len(names) != len(found):
        raise ExplainInputError(f"{where}: {len(names)} tokens for {len(found)} vectors")
    return [str(n) for n in names]


def parse_vector_options(texts: list[str], tokens: str | None = None) -> VectorInput:
    """``--vector "0.1,0.2,0.3"`` options, one per token, meaning self-attention."""
    rows = [(f"--vector {i + 1} ({t!r})", t) for i, t in enumerate(texts)]
    x, found = _parse_rows(rows, "--vector")
    labels = _names(tokens, found, "--tokens", "x")
    return VectorInput(x, x, x, labels, labels)


def _load_json(text: str, path: Path):
    """Parse JSON, remembering the line on which each array starts (for error messages)."""
    starts: dict[int, int] = {}
    decoder = json.JSONDecoder()

    def parse_array(s_and_end, scan_once, *args):
        array, end = json.decoder.JSONArray(s_and_end, scan_once, *args)
        starts[id(array)] = text.count("\n", 0, s_and_end[1]) + 1
        return array, end

    decoder.parse_array = parse_array
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # the pure-Python scanner
    try:
        return decoder.decode(text), starts
    except json.JSONDecodeError as err:
        raise ExplainInputError(f"{path}, line {err.lineno}: invalid JSON ({err.msg})") from None


def _json_matrix(obj, name: str, path: Path, starts) -> np.ndarray:
    where = f"{path}, line {starts.get(id(obj), 1)}"
    if not isinstance(obj, list) or not obj or not all(isinstance(r, list) for r in obj):
        raise ExplainInputError(f"{where}: {name!r} must be a non-empty list of vectors")
    rows = []
    for row in obj:
        row_where = f"{path}, line {starts[id(row)]}"
        bad = [x for x in row if isinstance(x, bool) or not isinstance(x, int | float)]
        if bad or not row:
            raise ExplainInputError(f"{row_where}: {bad[0] if bad else []!r} is not a number")
        rows.append((row_where, " ".join(map(repr, row))))
    return _parse_rows(rows, str(path))[0]


def _read_json(text: str, path: Path, tokens: str | None) -> VectorInput:
    """A list of vectors (self-attention) or ``{"queries", "keys", "values", "tokens",
    "key_tokens"}``; ``keys`` defaults to the queries, ``values`` to the keys."""
    data, starts = _load_json(text, path)
    data = {"queries": data} if isinstance(data, list) else data
    allowed = {"queries", "keys", "values", "tokens", "key_tokens"}
    if not isinstance(data, dict) or "queries" not in data or set(data) - allowed:
        raise ExplainInputError(
            f"{path}: expected a list of vectors or an object with 'queries' and optionally "
            f"'keys', 'values', 'tokens', 'key_tokens'"
        )
    q = _json_matrix(data["queries"], "queries", path, starts)
    k = _json_matrix(data["keys"], "keys", path, starts) if "keys" in data else q
    v = _json_matrix(data["values"], "values", path, starts) if "values" in data else k
    if "keys" not in data:  # self-attention: one set of labels
        labels = _names(tokens or data.get("tokens"), [None] * len(q), f"{path}: tokens", "x")
        return VectorInput(q, k, v, labels, labels)
    q_labels = _names(data.get("tokens"), [None] * len(q), f"{path}: tokens", "q")
    k_names = tokens or data.get("key_tokens")
    return VectorInput(q, k, v, q_labels, _names(k_names, [None] * len(k), str(path), "k"))


def read_vectors(path: str | Path, tokens: str | None = None) -> VectorInput:
    """Read vectors from a JSON file (see :func:`_read_json`) or a text file: one vector per
    line, numbers split by spaces or commas, an optional leading token, ``#`` comments; a text
    file means self-attention. ``tokens`` (comma/space separated) overrides the labels of the
    keys (and of the queries in self-attention).
    """
    path = Path(path)
    if not path.is_file():
        raise ExplainInputError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ExplainInputError(f"{path}: cannot read ({err})") from None
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        return _read_json(text, path, tokens)
    rows = [(f"{path}, line {i}", line) for i, line in enumerate(text.splitlines(), 1)]
    x, found = _parse_rows(rows, str(path))
    labels = _names(tokens, found, "--tokens", "x")
    return VectorInput(x, x, x, labels, labels)
