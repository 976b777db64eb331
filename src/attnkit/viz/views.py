"""Notebook views of attention: :func:`head_view`, :func:`model_view`, :func:`cross_view`.

Each returns an :class:`AttentionView`: ``_repr_html_()`` for Jupyter's rich display, ``.html``
(the fragment) and ``.save(path)`` (a standalone page). Every render is self-contained:
``static/viz.js`` and ``static/viz.css`` are inlined, the weights travel as JSON in a ``<script
type="application/json">`` (``</`` written ``<\\/``); no external resources, no requirejs, and
fresh element ids per render, so several views can share a notebook.

``attention`` may be an application's result that provides ``attention_record()`` (e.g. a
decoded sentence with its attention), a list holding one, or one hypothesis'
``{name: (H, Tq, Tk)}`` (:func:`~attnkit.interpret.structure.as_record`), an
:class:`~attnkit.interpret.structure.AttentionRecord` (``stack`` picks the stack), a Hugging
Face model output or its ``output_attentions`` tuple (``L`` tensors ``(B, H, Tq, Tk)``;
``batch_index`` picks the example), a list of ``L`` tensors ``(H, Tq, Tk)``, or one tensor or
array ``(L, H, Tq, Tk)``, ``(H, Tq, Tk)`` or ``(Tq, Tk)``. Rows are queries, columns keys.
"""

from __future__ import annotations

import html
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from attnkit.interpret import structure as _structure
from attnkit.interpret.structure import HF_STACKS, AttentionRecord, from_hf, from_hf_output

DECIMALS = 4  # weights are embedded rounded to this many decimals
FALLBACK = (
    "attnkit.viz: this view is drawn by JavaScript. If you read this, scripts did not run "
    "(in Jupyter: trust the notebook or re-run the cell)."
)


@dataclass(eq=False)
class AttentionView:
    """One rendered view. ``html`` is a fixed fragment; ``_repr_html_()`` renders afresh with
    new element ids each time it is called, so showing one view twice in a notebook works."""

    kind: str
    payload: dict = field(repr=False)
    html: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.html = _render(self.payload)

    def _repr_html_(self) -> str:
        return _render(self.payload)

    def save(self, path: str | Path) -> Path:
        """Write a standalone HTML page (no external resources) and return its path."""
        title = html.escape(self.payload["title"] or f"attnkit {self.kind} view")
        page = (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{title}</title>\n</head>\n<body>\n{self.html}\n</body>\n</html>\n"
        )
        Path(path).write_text(page, encoding="utf-8")
        return Path(path)

    def __repr__(self) -> str:
        layers, heads, tq, tk = self.payload["shape"]
        return f"<AttentionView {self.kind}: {layers} layers x {heads} heads, {tq} x {tk}>"


def _static(name: str) -> str:
    text = resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise RuntimeError(f"static/{name} must not contain '</script' or '</style'")
    return text


def _render(payload: dict) -> str:
    """The HTML fragment: a root ``<div>`` with a fresh id holding the style and the data,
    then the script that draws into it."""
    uid = f"akv-{uuid.uuid4().hex[:12]}"
    data = json.dumps(payload, allow_nan=False, separators=(",", ":"))
    data = data.replace("</", "<\\/").replace("<!--", "\\u003c!--")  # cannot end the <script>
    return (
        f'<div class="akv akv-{payload["kind"]}" id="{uid}">'
        f"<style>\n{_static('viz.css')}</style>"
        f'<script type="application/json" class="akv-data">{data}</script>'
        f'<p class="akv-fallback">{html.escape(FALLBACK)}</p></div>\n'
        f"<script>\n(function () {{\n{_static('viz.js')}\n"
        f"attnkitMount({json.dumps(uid)});\n}})();\n</script>"
    )


# ---- inputs -----------------------------------------------------------------------------


def _layers(attention, stack: str | None, batch_index: int, prefer: Sequence[str]):
    """Any accepted input -> (list of ``(H, Tq, Tk)`` float64 tensors, labels or None)."""
    # an application's result (or a list of one) or {name: (H, Tq, Tk)} -> AttentionRecord
    attention = _structure.as_record(attention)
    plain = (AttentionRecord, Tensor, np.ndarray, list, tuple)
    if not isinstance(attention, plain) and any(hasattr(attention, a) for a in HF_STACKS):
        attention = from_hf_output(attention, batch_index)  # a Hugging Face model output
    labels = None
    if isinstance(attention, AttentionRecord):
        name = stack or next((n for n in prefer if n in attention.stacks), attention.names[0])
        layers, labels = list(attention[name]), attention.labels.get(name)
    elif stack is not None:
        raise ValueError("stack= picks a stack of an AttentionRecord or a Hugging Face output")
    elif isinstance(attention, Tensor | np.ndarray):
        w = torch.as_tensor(attention)
        if w.dim() not in (2, 3, 4):
            raise ValueError(
                "a single tensor must be (Tq, Tk), (H, Tq, Tk) or (L, H, Tq, Tk); "
                f"got shape {tuple(w.shape)}"
            )
        layers = list(w[(None,) * (4 - w.dim())])  # L x (H, Tq, Tk)
    elif isinstance(attention, list | tuple):
        if not attention:
            raise ValueError("no attention given: the list of layers is empty")
        items = [torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in attention]
        if not all(isinstance(a, Tensor) for a in items):
            raise TypeError("a list of layers must hold tensors or arrays")
        dims = {a.dim() for a in items}
        if dims == {4}:
            layers = from_hf(items, batch_index)  # Hugging Face: L x (B, H, Tq, Tk)
        elif dims == {3}:
            layers = items
        else:
            raise ValueError(
                "expected one (H, Tq, Tk) tensor per layer, or a Hugging Face tuple of "
                f"(B, H, Tq, Tk) tensors; got shapes {[tuple(a.shape) for a in items]}"
            )
    else:
        raise TypeError(
            f"cannot show attention of type {type(attention).__name__}: give an "
            "AttentionRecord, a Hugging Face output_attentions tuple, or a list of "
            "(H, Tq, Tk) tensors"
        )
    shapes = sorted({tuple(w.shape) for w in layers})
    if len(shapes) > 1:
        raise ValueError(f"all layers must have one shape (H, Tq, Tk); got {shapes}")
    if min(shapes[0]) < 1:
        raise ValueError(f"empty attention: (H, Tq, Tk) = {shapes[0]}")
    layers = [w.detach().to("cpu", torch.float64) for w in layers]
    if not all(torch.isfinite(w).all() for w in layers):
        raise ValueError("the attention weights contain NaN or infinity")
    return layers, labels


def _is_pair(tokens) -> bool:
    return (
        isinstance(tokens, list | tuple)
        and len(tokens) == 2
        and all(isinstance(t, Sequence) and not isinstance(t, str) for t in tokens)
    )


def _words(tokens, what: str) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{what} must be a list of strings, got {type(tokens).__name__}")
    return [str(t) for t in tokens]


def _check_count(words: list[str], size: int, what: str, axis: str, shape) -> None:
    if len(words) != size:
        raise ValueError(
            f"{len(words)} {what} but the attention has {size} {axis}; "
            f"weights (Tq, Tk) = {tuple(shape)} (rows are queries, columns keys)"
        )


def _labels(tokens, found, tq: int, tk: int) -> tuple[list[str], list[str]]:
    """Query (row) and key (column) labels: ``tokens`` (one list for self-attention, or a pair
    ``(query tokens, key tokens)``), else the record's labels, else positions."""
    if tokens is None:
        rows, cols = found or (range(tq), range(tk))
    elif _is_pair(tokens):
        rows, cols = tokens
    else:
        rows = cols = _words(tokens, "tokens")
        if tq != tk and len(rows) in (tq, tk):
            raise ValueError(
                f"the attention is (Tq, Tk) = ({tq}, {tk}), not square: pass "
                "tokens=(query_tokens, key_tokens)"
            )
    rows, cols = _words(rows, "query tokens"), _words(cols, "key tokens")
    _check_count(rows, tq, "query tokens", "queries (Tq)", (tq, tk))
    _check_count(cols, tk, "key tokens", "keys (Tk)", (tq, tk))
    return rows, cols


def _index(value: int, size: int, what: str, plural: str) -> int:
    if not isinstance(value, int | np.integer) or not -size <= value < size:
        raise IndexError(f"{what} {value!r} out of range: the attention has {size} {plural}")
    return int(value) % size


def _min_weight(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"min_weight must lie in [0, 1], got {value}")
    return float(value)


def _payload(kind: str, layers, rows, cols, title, **extra) -> dict:
    w = torch.stack(layers)  # (L, H, Tq, Tk)
    title = "" if title is None else str(title)
    data = {"kind": kind, "title": title, "shape": list(w.shape), "rows": rows, "cols": cols}
    return data | {"weights": w.round(decimals=DECIMALS).tolist()} | extra


# ---- the views --------------------------------------------------------------------------


def head_view(
    attention,
    tokens=None,
    *,
    layer: int = 0,
    heads: int | Sequence[int] | None = None,
    stack: str | None = None,
    batch_index: int = 0,
    min_weight: float = 0.01,
    title: str | None = None,
) -> AttentionView:
    """One layer's heads as lines from each query (left) to each key (right), one colour per
    head, opacity = weight (lines below ``min_weight`` are left out). A menu picks the layer,
    buttons toggle heads (``heads``: the ones shown first, default all); hovering a token keeps
    only its lines and writes the weights (mean of the shown heads) beside the other side.

    ``tokens``: one list (self-attention) or ``(query tokens, key tokens)``."""
    layers, found = _layers(attention, stack, batch_index, ("self", "encoder", "cross"))
    n_heads, tq, tk = layers[0].shape
    rows, cols = _labels(tokens, found, tq, tk)
    layer = _index(layer, len(layers), "layer", "layers")
    chosen = range(n_heads) if heads is None else [heads] if isinstance(heads, int) else heads
    chosen = sorted({_index(h, n_heads, "head", "heads") for h in chosen})
    extra = {"layer": layer, "heads": chosen, "minWeight": _min_weight(min_weight)}
    return AttentionView("head", _payload("head", layers, rows, cols, title, **extra))


def model_view(
    attention,
    tokens=None,
    *,
    stack: str | None = None,
    batch_index: int = 0,
    zoom: tuple[int, int] | None = None,
    title: str | None = None,
) -> AttentionView:
    """Every layer and head as a grid of small heatmaps (rows layers, columns heads); click
    one (or press Enter on it) to show it large, with labels and hover tooltips. ``zoom``:
    ``(layer, head)`` to show large at first."""
    layers, found = _layers(attention, stack, batch_index, ("self", "encoder", "cross"))
    n_heads, tq, tk = layers[0].shape
    rows, cols = _labels(tokens, found, tq, tk)
    if zoom is not None:
        zoom = [
            _index(zoom[0], len(layers), "layer", "layers"),
            _index(zoom[1], n_heads, "head", "heads"),
        ]
    return AttentionView("model", _payload("model", layers, rows, cols, title, zoom=zoom))


def cross_view(
    weights,
    src_tokens: Sequence[str] | None = None,
    tgt_tokens: Sequence[str] | None = None,
    *,
    layer: int = -1,
    head: int | None = None,
    stack: str | None = None,
    batch_index: int = 0,
    min_weight: float = 0.05,
    title: str | None = None,
) -> AttentionView:
    """Cross-attention (target over source) as a heatmap, rows target tokens and columns source
    tokens, each row's strongest source outlined, with hover tooltips; beside it, alignment
    lines from each target token to the source tokens it attends to (opacity = weight, below
    ``min_weight`` left out). Menus pick the layer (default the last) and the head (default
    ``None``: the mean of the heads). ``weights`` takes every input form of the module; a
    record shows its ``"cross"`` stack unless ``stack`` says otherwise."""
    layers, found = _layers(weights, stack, batch_index, ("cross",))
    n_heads, tq, tk = layers[0].shape
    rows, cols = found or (list(map(str, range(tq))), list(map(str, range(tk))))
    rows = rows if tgt_tokens is None else _words(tgt_tokens, "tgt_tokens")
    cols = cols if src_tokens is None else _words(src_tokens, "src_tokens")
    if (len(rows), len(cols)) == (tk, tq) and tq != tk:
        raise ValueError(
            f"weights are (Tq, Tk) = ({tq}, {tk}) but there are {len(rows)} target and "
            f"{len(cols)} source tokens: pass weights as (target, source), i.e. transposed"
        )
    _check_count(rows, tq, "target tokens", "target positions (rows, Tq)", (tq, tk))
    _check_count(cols, tk, "source tokens", "source positions (columns, Tk)", (tq, tk))
    layer = _index(layer, len(layers), "layer", "layers")
    head = None if head is None else _index(head, n_heads, "head", "heads")
    extra = {"layer": layer, "head": head, "minWeight": _min_weight(min_weight)}
    return AttentionView("cross", _payload("cross", layers, rows, cols, title, **extra))
