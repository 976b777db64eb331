"""Step-by-step walk-throughs of attention: structured data (for ``--json``) and rich tables.

Every number shown comes from the NumPy reference
:func:`attnkit.attention.reference_numpy.attention`, which the tests check against
:func:`attnkit.attention.attend`. Built-in examples:

- ``two-word``: the "Thinking Machines" illustration of scaled dot-product attention (Alammar,
  *The Illustrated Transformer*, 2018; Vaswani et al. 2017, eq. (1)): ``q1 · k1 = 112``,
  ``q1 · k2 = 96``, ``d_k = 64``, scaled scores 14 and 12, softmax 0.88 and 0.12. The vectors
  are chosen so the dot products are exact: ``q1 = (1, ..., 1)``, ``k1 = (1.75, ..., 1.75)``,
  ``k2 = (1.5, ..., 1.5)`` (64 entries each: ``64 x 1.75 = 112``, ``64 x 1.5 = 96``); the
  values are ``v1 = (2, 0, 1)`` and ``v2 = (0, 2, 1)``.
- ``sentence``: "The cat sat on the mat" with the 3-d embeddings of :data:`SENTENCE_EMBEDDINGS`,
  parameter-free self-attention ``attend(x, x, x)`` with the ``dot`` and ``scaled_dot`` scores.

User vectors come from a file (:func:`read_vectors`) or ``--vector`` options
(:func:`parse_vector_options`); bad input raises :class:`ExplainInputError`, whose one-line
message names the file and line (or the option).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from attnkit.attention.cost import CostReport, engineering
from attnkit.attention.reference_numpy import AttentionSteps, attention
from attnkit.interpret.vectors import (
    ExplainInputError,
    VectorInput,
    parse_vector_options,
    read_vectors,
)

__all__ = [
    "ExplainInputError",
    "VectorInput",
    "Walkthrough",
    "builtin_examples",
    "cost_table",
    "parse_vector_options",
    "read_vectors",
    "render",
    "sentence_example",
    "two_word_example",
    "walkthrough",
]

EXAMPLES = ("two-word", "sentence")
EXPLAIN_SCORES = ("dot", "scaled_dot")
EXPLAIN_NORMALISERS = ("softmax", "sparsemax", "entmax15", "hard")
SENTENCE = ["The", "cat", "sat", "on", "the", "mat"]
SENTENCE_EMBEDDINGS = [
    [0.1, 0.2, 0.3],
    [0.4, 0.5, 0.6],
    [0.7, 0.8, 0.9],
    [1.0, 1.1, 1.2],
    [1.3, 1.4, 1.5],
    [1.6, 1.7, 1.8],
]


@dataclass
class Walkthrough:
    """One worked example: its inputs and every step of the attention (``steps``)."""

    title: str
    note: str
    inputs: VectorInput
    steps: AttentionSteps
    digits: int = 3  # decimals shown in the tables

    def to_dict(self) -> dict:
        """JSON-ready: full-precision numbers as nested lists."""
        i, s = self.inputs, self.steps
        out = {"title": self.title, "note": self.note, "score": s.score}
        out |= {"normaliser": s.normaliser, "d_k": int(i.keys.shape[-1]), "scale": s.scale}
        out |= {"query_tokens": i.query_tokens, "key_tokens": i.key_tokens}
        arrays = {"queries": i.queries, "keys": i.keys, "values": i.values, "scores": s.scores}
        arrays |= {"scaled_scores": s.scaled_scores, "weights": s.weights, "context": s.context}
        return out | {name: array.tolist() for name, array in arrays.items()}


def _check_choice(value: str, choices: tuple[str, ...], option: str) -> None:
    if value not in choices:
        raise ExplainInputError(f"{option} {value!r} is not one of {', '.join(choices)}")


def walkthrough(inputs: VectorInput, score="scaled_dot", normaliser="softmax", title="", note=""):
    """Run the NumPy reference attention on ``inputs`` and keep every step."""
    _check_choice(score, EXPLAIN_SCORES, "--score")
    _check_choice(normaliser, EXPLAIN_NORMALISERS, "--normaliser")
    q, k, v = inputs.queries, inputs.keys, inputs.values
    if q.shape[-1] != k.shape[-1]:
        raise ExplainInputError(
            f"queries have {q.shape[-1]} numbers each but keys {k.shape[-1]}; "
            "dot-product scores need equal widths"
        )
    if len(k) != len(v):
        raise ExplainInputError(f"{len(k)} keys but {len(v)} values; give one value per key")
    steps = attention(q, k, v, score=score, normaliser=normaliser)
    return Walkthrough(title, note or f"score {score!r}, normaliser {normaliser!r}", inputs, steps)


def two_word_example(score: str = "scaled_dot", normaliser: str = "softmax") -> Walkthrough:
    """The "Thinking Machines" example: 112 and 96 -> 14 and 12 -> 0.88 and 0.12."""
    queries = np.ones((1, 64))  # (1, 64): q1, the query of "Thinking"
    keys = np.stack([np.full(64, 1.75), np.full(64, 1.5)])  # (2, 64): q1·k1 = 112, q1·k2 = 96
    values = np.array([[2.0, 0.0, 1.0], [0.0, 2.0, 1.0]])  # (2, 3)
    inputs = VectorInput(queries, keys, values, ["Thinking"], ["Thinking", "Machines"])
    note = (
        "Query 'Thinking' against keys 'Thinking' and 'Machines' (d_k = 64): q1 = (1, ..., 1), "
        "k1 = (1.75, ..., 1.75), k2 = (1.5, ..., 1.5); values v1 = (2, 0, 1), v2 = (0, 2, 1)."
    )
    walk = walkthrough(inputs, score, normaliser, "Two words: Thinking Machines", note)
    walk.digits = 2
    return walk


def sentence_example(score: str = "dot", normaliser: str = "softmax") -> Walkthrough:
    """Self-attention over "The cat sat on the mat": ``attend(x, x, x, score=score)``."""
    x = np.array(SENTENCE_EMBEDDINGS)  # (6, 3)
    note = f"Self-attention without learned parameters: queries = keys = values = x ({score!r})."
    title = f"The cat sat on the mat ({score})"
    return walkthrough(VectorInput(x, x, x, SENTENCE, SENTENCE), score, normaliser, title, note)


def builtin_examples(name=None, score=None, normaliser="softmax") -> list[Walkthrough]:
    """``name``: ``"two-word"``, ``"sentence"`` or None (both); ``score`` None: each one's own."""
    if name is not None:
        _check_choice(name, EXAMPLES, "--example")
    out = []
    if name in (None, "two-word"):
        out.append(two_word_example(score or "scaled_dot", normaliser))
    if name in (None, "sentence"):
        out += [sentence_example(s, normaliser) for s in ([score] if score else EXPLAIN_SCORES)]
    return out


# ----------------------------------------------------------------------------- user vectors


# ---------------------------------------------------------------------------------- display


def format_number(x: float, digits: int = 3) -> str:
    """``0.8808 -> "0.88"`` with ``digits=2``; ``112.0 -> "112"`` with ``digits=0``."""
    return f"{float(x):.{digits}f}"


def _matrix(data: np.ndarray, rows: list[str], columns: list[str], digits: int) -> Table:
    """A table of ``data (rows, columns)``; a table of whole numbers is shown without decimals."""
    whole = bool(np.all(np.isfinite(data) & (data == np.round(data))))
    table = Table()
    table.add_column("")
    for c in columns:
        table.add_column(escape(c), justify="right")
    for name, row in zip(rows, data, strict=True):
        table.add_row(escape(name), *(format_number(x, 0 if whole else digits) for x in row))
    return table


def render(walk: Walkthrough, console: Console) -> None:
    """Print ``walk`` as rich tables, one per step: score, (scale), normalise, weighted sum."""
    i, s, d = walk.inputs, walk.steps, walk.digits
    qt, kt = i.query_tokens, i.key_tokens

    def show(title, data, columns):
        console.print(f"[bold]{escape(title)}")
        console.print(_matrix(data, qt if data is not i.keys else kt, columns, d))

    console.rule(f"[bold]{escape(walk.title)}")
    console.print(escape(walk.note))
    dims = [f"[{j}]" for j in range(i.keys.shape[-1])]
    if i.keys is i.queries and i.values is i.keys and len(dims) <= 8:
        show("Input x (queries = keys = values)", i.keys, dims)
    show("Step 1. score q · k (rows: queries, columns: keys)", s.scores, kt)
    step = 2
    if s.scale is not None:
        dk = i.keys.shape[-1]
        root = format_number(dk**0.5, 0 if float(dk**0.5).is_integer() else d)
        show(f"Step 2. scale: divide by √d_k = √{dk} = {root}", s.scaled_scores, kt)
        step = 3
    show(f"Step {step}. normalise each row with {s.normaliser}: the weights", s.weights, kt)
    v_dims = [f"[{j}]" for j in range(i.values.shape[-1])]
    show(f"Step {step + 1}. context = weights @ values", s.context, v_dims)


def cost_table(report: CostReport) -> Table:
    """The comparison of :func:`attnkit.attention.cost.layer_costs` as a rich table."""
    n, d = report.length, report.width
    title = f"Cost of one layer at n = {n}, d = {d} (Vaswani et al. 2017, Table 1)"
    crossover = (
        f"self-attention costs more than the recurrent layer for n > {report.crossover_length}"
    )
    caption = escape(f"{report.counting}.\n{crossover}.")
    table = Table(title=title, caption=caption, title_justify="left", caption_justify="left")
    table.show_edge = False  # fits 80 columns
    table.add_column("layer", no_wrap=True)
    for name in ("work", "FLOPs", "mult-adds", "sequential", "max path"):
        table.add_column(name, justify="right", no_wrap=name != "max path")
    for r in report.layers:
        flops, macs = engineering(r.flops), engineering(r.multiply_adds)
        sequential = f"{r.sequential_operations} {r.sequential_complexity}"
        path = f"{r.max_path_length} {r.path_complexity}"
        table.add_row(r.layer, r.complexity, flops, macs, sequential, path)
    return table
