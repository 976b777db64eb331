"""Alignment pictures (attnkit.interpret.alignment_plot): the marked cells and the errors."""

from __future__ import annotations

import pytest
import torch

from attnkit.interpret.alignment_plot import marks, plot_alignments
from attnkit.interpret.alignments import Alignment


def test_marks_are_row_argmaxes_and_gold_links_in_row_column_order():
    weights = torch.tensor([[0.1, 0.9, 0.0], [0.7, 0.2, 0.1]])  # (T=2, S=3)
    gold = Alignment(frozenset({(1, 0)}), frozenset({(2, 1)}))  # (source, target)
    cells = marks(weights, gold)
    assert cells == {"argmax": [(0, 1), (1, 0)], "sure": [(0, 1)], "possible": [(1, 2)]}
    assert set(marks(weights)) == {"argmax"}


def test_plot_alignments_writes_one_panel_per_map_and_checks_shapes(tmp_path):
    w = torch.rand(3, 4).softmax(-1)
    gold = Alignment(frozenset({(0, 0), (3, 2)}))
    maps = {"raw": w, "shift": torch.roll(w, -1, 0)}
    path = plot_alignments(maps, list("abcd"), list("xyz"), tmp_path / "a.png", gold, "t")
    assert path.stat().st_size > 1000
    with pytest.raises(ValueError, match="raw: weights of shape \\(3, 4\\) for 2 target and 4"):
        plot_alignments({"raw": w}, list("abcd"), list("xy"), tmp_path / "b.png")
