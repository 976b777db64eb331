"""Attention heatmaps with matplotlib: rows are queries, columns keys.

For translation the queries are the output tokens and the keys the source tokens (the picture
of Bahdanau et al. 2015, Fig. 3). Every function takes weights as a NumPy array or a tensor and
writes PNG, SVG or PDF, chosen by the suffix of ``path``. SVG keeps its text as ``<text>``
elements, so the token labels stay searchable and selectable.

- :func:`plot_heatmap`: one map ``(Tq, Tk)``.
- :func:`plot_heads`: one layer's heads ``(H, Tq, Tk)`` as a grid.
- :func:`plot_overview`: ``L`` layers x ``H`` heads of small maps (Clark et al. 2019, Fig. 1
  style), e.g. from :func:`attnkit.interpret.structure.from_hf`.
- :func:`plot_record`: one stack of an
  :class:`~attnkit.interpret.structure.AttentionRecord`, or of an application's result that
  provides ``attention_record()``, labelled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from attnkit.runtime import files_backend

files_backend()  # files only; no window (a notebook keeps its own backend)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FORMATS = (".png", ".svg", ".pdf")
ROWS = "rows = queries"
COLUMNS = "columns = keys"
CMAP = "Greys"


def as_array(weights) -> np.ndarray:
    """A float64 NumPy copy of a tensor (any device or dtype, with or without grad) or array."""
    if hasattr(weights, "detach"):
        weights = weights.detach().float().cpu().numpy()
    return np.asarray(weights, dtype=float)


def _labels(labels: Sequence[str]) -> list[str]:
    """Tick labels shown literally: a ``$`` would otherwise start matplotlib's math mode."""
    return [str(s).replace("$", r"\$") for s in labels]


def _check_format(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: unknown picture format {path.suffix!r}; use one of {FORMATS}")
    return path


def _check_map(w: np.ndarray, q_labels: Sequence[str], k_labels: Sequence[str], what: str):
    expected = (len(q_labels), len(k_labels))
    if w.shape[-2:] != expected:
        raise ValueError(
            f"{what} of shape {w.shape} do not match {expected[0]} query (row) and "
            f"{expected[1]} key (column) labels"
        )


def _save(fig, path: Path) -> Path:
    """Write ``fig`` in the format of ``path``'s suffix and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _show(ax, w: np.ndarray, vmax: float, aspect: str = "auto"):
    """One map, white 0 to black ``vmax``; ``nearest``: one crisp cell per weight."""
    vmax = max(1e-9, vmax)
    return ax.imshow(w, cmap=CMAP, vmin=0.0, vmax=vmax, aspect=aspect, interpolation="nearest")


def _ticks(ax, q_labels, k_labels, *, rows: bool = True, cols: bool = True, size: float = 8):
    ax.set_xticks(range(len(k_labels)), _labels(k_labels) if cols else [], rotation=90)
    ax.set_yticks(range(len(q_labels)), _labels(q_labels) if rows else [])
    ax.tick_params(labelsize=size, length=2 if (rows or cols) else 0)


def plot_heatmap(
    weights,
    src_labels: Sequence[str],
    tgt_labels: Sequence[str],
    path: str | Path,
    title: str = "",
) -> Path:
    """Save a heatmap of ``weights (T_out, S)``: rows the queries ``tgt_labels`` (outputs),
    columns the keys ``src_labels`` (source), to ``path`` (PNG, SVG or PDF by suffix)."""
    w, path = as_array(weights), _check_format(path)
    if w.ndim != 2:
        raise ValueError(f"weights must be (T_out, S), got shape {w.shape}")
    if (len(tgt_labels) + 1, len(src_labels)) == w.shape:
        raise ValueError(
            f"weights have {w.shape[0]} rows but {len(tgt_labels)} output labels: the last row "
            "is the end-of-sentence step; label it too (Translation.rows(), or the saved "
            "attention's meta['rows'])"
        )
    _check_map(w, tgt_labels, src_labels, "weights")
    height = max(2.5, 0.32 * len(tgt_labels) + 1.5)
    width = max(3.0, 0.32 * len(src_labels) + 2.0)
    fig, ax = plt.subplots(figsize=(width, height))
    image = _show(ax, w, float(w.max()))
    _ticks(ax, tgt_labels, src_labels)
    ax.set_xlabel(f"{COLUMNS} (source)")
    ax.set_ylabel(f"{ROWS} (output)")
    if title:
        ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.04)
    fig.tight_layout()
    return _save(fig, path)


def _grid(rows: int, cols: int, cell: tuple[float, float], extra: tuple[float, float]):
    """A ``rows x cols`` grid of axes, each ``cell = (width, height)`` inches, plus margins."""
    size = (cell[0] * cols + extra[0], cell[1] * rows + extra[1])
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, layout="constrained")
    return fig, axes


def plot_heads(
    weights,
    q_labels: Sequence[str],
    k_labels: Sequence[str],
    path: str | Path,
    title: str = "",
    cols: int | None = None,
) -> Path:
    """One layer's heads ``weights (H, Tq, Tk)`` as a grid of maps (``cols`` per row, at most
    4 by default) on one shared colour scale, so heads can be compared."""
    w, path = as_array(weights), _check_format(path)
    if w.ndim != 3:
        raise ValueError(f"weights must be (H, Tq, Tk), got shape {w.shape}")
    _check_map(w, q_labels, k_labels, "weights")
    heads = w.shape[0]
    cols = min(heads, cols or 4)
    rows = math.ceil(heads / cols)
    cell = (max(1.8, 0.22 * len(k_labels) + 1.0), max(1.8, 0.22 * len(q_labels) + 0.8))
    fig, axes = _grid(rows, cols, cell, (1.0, 0.8))
    vmax = float(w.max())
    for h, ax in enumerate(axes.flat):
        if h >= heads:
            ax.axis("off")
            continue
        image = _show(ax, w[h], vmax)
        bottom = h + cols >= heads  # no map below this one
        _ticks(ax, q_labels, k_labels, rows=h % cols == 0, cols=bottom, size=7)
        ax.set_title(f"head {h}", fontsize=8)
    fig.supxlabel(COLUMNS, fontsize=9)
    fig.supylabel(ROWS, fontsize=9)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.colorbar(image, ax=axes, fraction=0.03)
    return _save(fig, path)


def _stack_layers(attentions) -> np.ndarray:
    """``(L, H, Tq, Tk)`` from a sequence of per-layer ``(H, Tq, Tk)``, with a clear error."""
    layers = [as_array(a) for a in attentions]
    if not layers:
        raise ValueError("no layers to plot")
    for i, a in enumerate(layers):
        if a.ndim != 3 or a.shape != layers[0].shape:
            raise ValueError(
                f"layer {i} has shape {a.shape}; every layer must be (H, Tq, Tk) like layer 0 "
                f"{layers[0].shape} (take one example of a batch first, e.g. with from_hf)"
            )
    return np.stack(layers)  # (L, H, Tq, Tk)


def plot_overview(
    attentions,
    labels: Sequence[str],
    path: str | Path,
    title: str = "",
    k_labels: Sequence[str] | None = None,
    max_labelled: int = 40,
) -> Path:
    """Every layer and head at a glance: ``attentions`` is a sequence of ``(H, Tq, Tk)``, one per
    layer; the grid has a row per layer (layer 0, the lowest, at the top) and a column per head.

    ``labels`` name the queries, and the keys too unless ``k_labels`` are given (cross
    attention). They are drawn on the left column and the bottom row when there are at most
    ``max_labelled`` tokens; each map is scaled to its own maximum.
    """
    w, path = _stack_layers(attentions), _check_format(path)
    k_labels = labels if k_labels is None else k_labels
    _check_map(w, labels, k_labels, "attentions")
    n_layers, heads = w.shape[:2]
    show = max(len(labels), len(k_labels)) <= max_labelled
    side = 1.1 if not show else max(1.1, 0.09 * max(len(labels), len(k_labels)) + 0.6)
    fig, axes = _grid(n_layers, heads, (side, side), (0.8, 0.6))
    for (layer, h), ax in np.ndenumerate(axes):
        _show(ax, w[layer, h], float(w[layer, h].max()), aspect="equal")
        left, bottom = h == 0 and show, layer == n_layers - 1 and show
        _ticks(ax, labels, k_labels, rows=left, cols=bottom, size=4)
        if layer == 0:
            ax.set_title(f"head {h}", fontsize=7)
        if h == 0:
            ax.set_ylabel(f"layer {layer}", fontsize=7)
    fig.supxlabel(COLUMNS, fontsize=8)
    fig.supylabel(ROWS, fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    return _save(fig, path)


def plot_record(
    result,
    name: str = "cross",
    path: str | Path = "attention.png",
    head: int | None = None,
    *,
    layer: int = -1,
    hypothesis: int = 0,
    title: str | None = None,
) -> Path:
    """Heatmap of one stack of recorded attention: the stack ``name`` (e.g. ``"cross"``,
    ``"self"`` or ``"encoder"``) at ``layer`` (default the last), averaged over heads unless
    ``head``. ``result`` is an :class:`~attnkit.interpret.structure.AttentionRecord`, or an
    application's result that provides ``attention_record()`` (or a list of one);
    ``hypothesis`` picks one of an n-best list. Rows and columns carry the record's labels
    (positions where it has none); ``title`` heads the figure.
    """
    from attnkit.interpret.structure import AttentionRecord, as_record

    record = as_record(result, hypothesis)
    if not isinstance(record, AttentionRecord) or name not in record.stacks:
        have = list(getattr(record, "stacks", {}))
        raise ValueError(f"the result has no attention named {name!r} (it has {have})")
    layers = record[name]
    weights = layers[layer]  # (H, Tq, Tk)
    w = weights[head] if head is not None else weights.mean(0)  # (Tq, Tk)
    positions = tuple([str(i) for i in range(n)] for n in w.shape)  # (Tq, Tk) unlabelled
    rows, cols = record.labels.get(name, positions)
    where = f"{name}, layer {layer % len(layers)}"
    heading = (f"{title}  ({where})" if len(layers) > 1 else title) if title else where
    return plot_heatmap(w.numpy(), cols, rows, path, title=heading)
