"""Notebook views of attention: :func:`head_view`, :func:`model_view`, :func:`cross_view`.

Each returns an :class:`AttentionView`: ``_repr_html_()`` for Jupyter's rich display, ``.html``
(the fragment) and ``.save(path)`` (a standalone page). Every render is self-contained:
``static/viz.js``, ``static/viz_data.js`` and ``static/viz.css`` are inlined, the data travels
as JSON in a ``<script type="application/json">`` (``</`` written ``<\\/``; the weights inside
it as base64, see :mod:`attnkit.viz.view_options`); no external resources, no requirejs, and
fresh element ids per render, so several views can share a notebook.

``attention`` may be an application's result that provides ``attention_record()`` (e.g. a
decoded sentence with its attention), a list holding one, or one hypothesis'
``{name: (H, Tq, Tk)}`` (:func:`~attnkit.interpret.structure.as_record`), an
:class:`~attnkit.interpret.structure.AttentionRecord` (``stack`` picks the stack), a Hugging
Face model output or its ``output_attentions`` tuple (``L`` tensors ``(B, H, Tq, Tk)``;
``batch_index`` picks the example), a list of ``L`` tensors ``(H, Tq, Tk)``, or one tensor or
array ``(L, H, Tq, Tk)``, ``(H, Tq, Tk)`` or ``(Tq, Tk)``. Rows are queries, columns keys.

Long inputs and big models: ``layers=`` (and ``heads=`` in :func:`model_view`) pick what the
page embeds, labelled by true numbers; ``scale=`` (``"linear"``, ``"row"``, ``"log"``) and
``sink=`` (``"show"``, ``"drop"``, ``"separate"``) are described in
:mod:`attnkit.viz.view_options`. A page is bounded: a view that would exceed
:data:`MAX_PAGE_CHARS` (2,000,000 characters) raises a ValueError that says how to cut it,
before any weight is converted (``AttentionView.payload`` keeps them as nested lists).
"""

from __future__ import annotations

import html
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from attnkit.viz import view_options as _options
from attnkit.viz.view_inputs import check_count, labels_of, layers_of, words
from attnkit.viz.view_options import DECIMALS, SCALES, SINKS, among, index, pick

__all__ = ["DECIMALS", "MAX_PAGE_CHARS", "AttentionView", "cross_view", "head_view", "model_view"]
MAX_PAGE_CHARS = 2_000_000  # a view whose page would be longer raises (see _check_size)
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
    return _html(payload["kind"], _options.page_json(payload))


def _html(kind: str, data: str) -> str:
    """The HTML fragment: a root ``<div>`` with a fresh id holding the style and the data
    (JSON that cannot end its ``<script>``), then the script that draws into it."""
    uid = f"akv-{uuid.uuid4().hex[:12]}"
    return (
        f'<div class="akv akv-{kind}" id="{uid}">'
        f"<style>\n{_static('viz.css')}</style>"
        f'<script type="application/json" class="akv-data">{data}</script>'
        f'<p class="akv-fallback">{html.escape(FALLBACK)}</p></div>\n'
        f"<script>\n(function () {{\n{_static('viz.js')}\n{_static('viz_data.js')}\n"
        f"attnkitMount({json.dumps(uid)});\n}})();\n</script>"
    )


def _min_weight(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"min_weight must lie in [0, 1], got {value}")
    return float(value)


def _check_size(shell: dict, hint: str) -> None:
    """Raise before converting any weight if the page would exceed :data:`MAX_PAGE_CHARS`."""
    data, arrays = _options.shell_json(shell)
    size = len(_html(shell["kind"], data)) + arrays
    if size > MAX_PAGE_CHARS:
        layers, heads, tq, tk = shell["shape"]
        raise ValueError(
            f"this {shell['kind']} view would be a page of {size:,} characters, over "
            f"attnkit.viz.views.MAX_PAGE_CHARS = {MAX_PAGE_CHARS:,} ({layers} layers x {heads} "
            f"heads x {tq} x {tk} weights): {hint}, or show fewer tokens"
        )


def _view(kind: str, layers, ids, labels, title, scale: str, sink: str, hint: str, **extra):
    """Check the options and the page's size, then gather the selected weights and render.
    ``ids``: (true layer numbers, true head numbers) to embed; ``labels``: (rows, cols)."""
    (layer_ids, head_ids), (rows, cols) = ids, labels
    scale, sink = _options.choose(scale, SCALES, "scale"), _options.choose(sink, SINKS, "sink")
    tq, tk = layers[0].shape[1:]
    if sink != "show" and tk < 2:
        raise ValueError(f"sink={sink!r} needs at least two keys; the attention has Tk = {tk}")
    shell = {
        "kind": kind,
        "title": "" if title is None else str(title),
        "shape": [len(layer_ids), len(head_ids), tq, tk],
        "rows": rows,
        "cols": cols,
        "layerIds": layer_ids,
        "headIds": head_ids,
        "scale": scale,
        "sink": sink,
    } | extra
    _check_size(shell, hint)
    w = _options.gather(layers, layer_ids, head_ids)  # (L', H', Tq, Tk) float64
    return AttentionView(kind, _options.payload(shell, w))


# ---- the views --------------------------------------------------------------------------


def head_view(
    attention,
    tokens=None,
    *,
    layer: int | None = None,
    layers: int | Sequence[int] | None = None,
    heads: int | Sequence[int] | None = None,
    stack: str | None = None,
    batch_index: int = 0,
    min_weight: float = 0.01,
    scale: str = "linear",
    sink: str = "show",
    title: str | None = None,
) -> AttentionView:
    """One layer's heads as lines from each query (left) to each key (right), one colour per
    head, opacity = weight on the colour ``scale`` (lines fainter than ``min_weight`` are left
    out). A menu picks the layer among ``layers`` (default all; ``layer``: the one shown
    first, default the first of them), buttons toggle heads (``heads``: the ones shown first,
    default all; every head of the embedded layers is embedded); hovering a token keeps only
    its lines and writes the raw weights (mean of the shown heads) beside the other side.
    ``sink="separate"`` draws key 0's weight as a bar beside each query.

    ``tokens``: one list (self-attention) or ``(query tokens, key tokens)``. Raises a
    ValueError if the page would exceed :data:`MAX_PAGE_CHARS`."""
    found_layers, found = layers_of(attention, stack, batch_index, ("self", "encoder", "cross"))
    n_heads, tq, tk = found_layers[0].shape
    labels = labels_of(tokens, found, tq, tk)
    n_layers = len(found_layers)
    layer_ids = pick(layers, n_layers, "layer", "layers")
    first = layer_ids[0] if layer is None else among(layer, layer_ids, n_layers, "layer", "layers")
    shown = pick(heads, n_heads, "head", "heads", empty=True)  # may start with none shown
    extra = {"layer": first, "heads": shown, "minWeight": _min_weight(min_weight)}
    ids = (layer_ids, list(range(n_heads)))
    hint = "pass layers= (e.g. layers=[0]) to embed fewer layers"
    return _view("head", found_layers, ids, labels, title, scale, sink, hint, **extra)


def model_view(
    attention,
    tokens=None,
    *,
    layers: int | Sequence[int] | None = None,
    heads: int | Sequence[int] | None = None,
    stack: str | None = None,
    batch_index: int = 0,
    zoom: tuple[int, int] | None = None,
    scale: str = "linear",
    sink: str = "show",
    title: str | None = None,
) -> AttentionView:
    """Every selected layer and head (``layers``, ``heads``: default all; true numbers,
    negative from the end) as a grid of small heatmaps (rows layers, columns heads, labelled
    by their true numbers); click one (or press Enter on it) to show it large, with labels and
    hover tooltips. ``zoom``: ``(layer, head)`` to show large at first. ``scale``, ``sink``:
    see :mod:`attnkit.viz.view_options`. Raises a ValueError if the page would exceed
    :data:`MAX_PAGE_CHARS`."""
    found_layers, found = layers_of(attention, stack, batch_index, ("self", "encoder", "cross"))
    n_heads, tq, tk = found_layers[0].shape
    labels = labels_of(tokens, found, tq, tk)
    n_layers = len(found_layers)
    ids = (pick(layers, n_layers, "layer", "layers"), pick(heads, n_heads, "head", "heads"))
    if zoom is not None:
        zoom = [
            among(zoom[0], ids[0], n_layers, "layer", "layers"),
            among(zoom[1], ids[1], n_heads, "head", "heads"),
        ]
    hint = "pass layers= or heads= (e.g. layers=[0], heads=[0, 1]) to embed fewer"
    return _view("model", found_layers, ids, labels, title, scale, sink, hint, zoom=zoom)


def cross_view(
    weights,
    src_tokens: Sequence[str] | None = None,
    tgt_tokens: Sequence[str] | None = None,
    *,
    layer: int | None = None,
    layers: int | Sequence[int] | None = None,
    head: int | None = None,
    stack: str | None = None,
    batch_index: int = 0,
    min_weight: float = 0.05,
    scale: str = "linear",
    sink: str = "show",
    title: str | None = None,
) -> AttentionView:
    """Cross-attention (target over source) as a heatmap, rows target tokens and columns source
    tokens, each row's strongest source outlined, with hover tooltips; beside it, alignment
    lines from each target token to the source tokens it attends to (opacity = weight on the
    colour ``scale``, fainter than ``min_weight`` left out). Menus pick the layer among
    ``layers`` (default all; ``layer``: the one shown first, default the last of them) and the
    head (default ``None``: the mean of the heads). ``weights`` takes every input form of the
    module; a record shows its ``"cross"`` stack unless ``stack`` says otherwise. Raises a
    ValueError if the page would exceed :data:`MAX_PAGE_CHARS`."""
    found_layers, found = layers_of(weights, stack, batch_index, ("cross",))
    n_heads, tq, tk = found_layers[0].shape
    rows, cols = found or (list(map(str, range(tq))), list(map(str, range(tk))))
    rows = rows if tgt_tokens is None else words(tgt_tokens, "tgt_tokens")
    cols = cols if src_tokens is None else words(src_tokens, "src_tokens")
    if (len(rows), len(cols)) == (tk, tq) and tq != tk:
        raise ValueError(
            f"weights are (Tq, Tk) = ({tq}, {tk}) but there are {len(rows)} target and "
            f"{len(cols)} source tokens: pass weights as (target, source), i.e. transposed"
        )
    check_count(rows, tq, "target tokens", "target positions (rows, Tq)", (tq, tk))
    check_count(cols, tk, "source tokens", "source positions (columns, Tk)", (tq, tk))
    n_layers = len(found_layers)
    layer_ids = pick(layers, n_layers, "layer", "layers")
    last = layer_ids[-1] if layer is None else among(layer, layer_ids, n_layers, "layer", "layers")
    head = None if head is None else index(head, n_heads, "head", "heads")
    extra = {"layer": last, "head": head, "minWeight": _min_weight(min_weight)}
    ids = (layer_ids, list(range(n_heads)))
    hint = "pass layers= (e.g. layers=[-1]) to embed fewer layers"
    return _view("cross", found_layers, ids, (rows, cols), title, scale, sink, hint, **extra)
