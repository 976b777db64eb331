"""Heatmaps checked by their pixels: each weight's cell, at its row and column, has the shade
its weight asks for (white 0, black the map's maximum, darker for more weight).

The PNG is read back and each map's cells are found from the drawn image's extent on the
figure (recorded when the figure is saved, scaled to the PNG's size). A map drawn transposed,
flipped, blurred or in reversed shades fails.
"""

from __future__ import annotations

import matplotlib.image
import numpy as np
import pytest
from matplotlib.figure import Figure

from attnkit.interpret.heatmap import plot_heads, plot_heatmap, plot_overview

# 3 queries x 5 keys, 15 distinct weights and one hot cell at row 0, column 3: no symmetry,
# so a transposed or flipped map puts other shades in the cells.
WEIGHTS = np.array(
    [
        [0.10, 0.35, 0.05, 1.00, 0.20],
        [0.45, 0.00, 0.30, 0.15, 0.55],
        [0.25, 0.60, 0.40, 0.50, 0.65],
    ]
)
QUERIES = ["q0", "q1", "q2"]
KEYS = ["k0", "k1", "k2", "k3", "k4"]


def _render(monkeypatch, plot, *args, **kwargs):
    """Call ``plot`` (which saves a PNG); returns the PNG as ``(H, W, 3)`` floats in [0, 1]
    and the pixel box ``(left, top, right, bottom)`` of each image drawn, in drawing order."""
    seen = []
    real = Figure.savefig

    def savefig(fig, fname, *a, **kw):
        fig.canvas.draw()  # lays the figure out as saving does, at the figure's own dpi
        width, height = fig.get_size_inches() * fig.dpi
        boxes = [im.get_window_extent() for ax in fig.axes for im in ax.get_images()]
        seen.append((width, height, boxes))
        return real(fig, fname, *a, **kw)

    monkeypatch.setattr(Figure, "savefig", savefig)
    path = plot(*args, **kwargs)
    monkeypatch.undo()
    png = matplotlib.image.imread(path)[..., :3]  # (H, W, RGB)
    (width, height, boxes), rows, cols = seen[0], *png.shape[:2]
    sx, sy = cols / width, rows / height  # figure pixels -> PNG pixels (savefig's dpi)
    return png, [(b.x0 * sx, rows - b.y1 * sy, b.x1 * sx, rows - b.y0 * sy) for b in boxes]


def _cells(png: np.ndarray, box, shape: tuple[int, int]) -> np.ndarray:
    """The grey level (0 black .. 1 white) of each of ``shape`` cells in ``box``; the inner
    half of each cell must be one flat colour (no interpolation)."""
    left, top, right, bottom = box
    n_rows, n_cols = shape
    h, w = (bottom - top) / n_rows, (right - left) / n_cols
    assert h > 6 and w > 6, f"cells of {w:.1f} x {h:.1f} pixels are too small to check"
    out = np.empty(shape)
    for r in range(n_rows):
        for c in range(n_cols):
            y0, x0 = top + (r + 0.25) * h, left + (c + 0.25) * w
            patch = png[round(y0) : round(y0 + h / 2), round(x0) : round(x0 + w / 2)]
            assert patch.size, (r, c)
            assert np.ptp(patch) <= 2 / 255, f"cell ({r}, {c}) is not one flat colour"
            out[r, c] = patch.mean()
    return out


def _assert_shows(png: np.ndarray, box, weights: np.ndarray) -> None:
    """Cell (i, j) of the picture shows ``weights[i, j]``: 0 white, the maximum black, and
    more weight always darker."""
    grey = _cells(png, box, weights.shape)
    hot = np.unravel_index(np.argmax(weights), weights.shape)
    assert np.unravel_index(np.argmin(grey), grey.shape) == hot, f"darkest cell {grey}"
    assert grey[hot] <= 2 / 255, f"the heaviest cell {hot} is not black: {grey[hot]:.3f}"
    zero = weights == 0
    assert np.all(grey[zero] >= 253 / 255), f"zero-weight cells are not white: {grey[zero]}"
    order = np.argsort(weights, axis=None, kind="stable")
    shades = grey.reshape(-1)[order]
    assert np.all(np.diff(shades) < 0), f"shades not darker for each heavier weight: {grey}"


def test_heatmap_cells_have_their_weights_shade(tmp_path, monkeypatch):
    png, boxes = _render(monkeypatch, plot_heatmap, WEIGHTS, KEYS, QUERIES, tmp_path / "m.png")
    assert len(boxes) == 1  # the map (the colour bar is not an image)
    left, top, right, bottom = boxes[0]
    assert (right - left) > (bottom - top)  # 5 columns of keys, 3 rows of queries
    _assert_shows(png, boxes[0], WEIGHTS)


def test_a_transposed_or_flipped_map_fails_the_check(tmp_path, monkeypatch):
    """The check itself: pictures of the wrong matrix are refused."""
    for i, (wrong, rows, cols) in enumerate(
        [
            (WEIGHTS.T, KEYS, QUERIES),  # transposed
            (WEIGHTS[::-1], QUERIES, KEYS),  # rows upside down
            (WEIGHTS[:, ::-1], QUERIES, KEYS),  # columns mirrored
            (WEIGHTS.max() - WEIGHTS, QUERIES, KEYS),  # shades reversed
        ]
    ):
        png, boxes = _render(monkeypatch, plot_heatmap, wrong, cols, rows, tmp_path / f"{i}.png")
        with pytest.raises(AssertionError):
            _assert_shows(png, boxes[0], WEIGHTS)


def test_heads_share_one_scale_and_keep_rows_and_columns(tmp_path, monkeypatch):
    heads = np.stack([WEIGHTS, WEIGHTS[::-1, ::-1] / 2])  # (H=2, Tq, Tk); head 1 half as heavy
    png, boxes = _render(monkeypatch, plot_heads, heads, QUERIES, KEYS, tmp_path / "h.png")
    assert len(boxes) == 2
    _assert_shows(png, boxes[0], heads[0])
    grey = _cells(png, boxes[1], heads[1].shape)  # one scale: head 1's maximum is mid-grey
    hot = np.unravel_index(np.argmax(heads[1]), heads[1].shape)
    assert hot == (2, 1) and np.unravel_index(np.argmin(grey), grey.shape) == hot
    assert 0.2 < grey[hot] < 0.8
    order = np.argsort(heads[1], axis=None, kind="stable")
    assert np.all(np.diff(grey.reshape(-1)[order]) <= 0)


def test_overview_draws_each_layer_and_head_in_place(tmp_path, monkeypatch):
    square = np.array([[0.0, 0.9, 0.1], [0.3, 0.2, 0.6], [0.5, 0.4, 1.0]])  # (Tq, Tk) = 3 x 3
    layers = [np.stack([square, square.T]), np.stack([square[::-1], square[:, ::-1]])]
    png, boxes = _render(monkeypatch, plot_overview, layers, QUERIES, tmp_path / "o.png")
    assert len(boxes) == 4  # layer 0 heads 0, 1, then layer 1 heads 0, 1
    for box, expected in zip(boxes, [m for layer in layers for m in layer], strict=True):
        _assert_shows(png, box, expected)
