"""Heatmaps: valid PNG / SVG / PDF files, labels in the SVG text, clear errors on bad shapes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

from attnkit.apps.translation.decode.records import plot_translation
from attnkit.apps.translation.decode.translate import Translation
from attnkit.interpret.heatmap import (
    COLUMNS,
    ROWS,
    plot_heads,
    plot_heatmap,
    plot_overview,
    plot_record,
)
from attnkit.interpret.structure import AttentionRecord

SRC = ["▁the", "▁cat", "▁sat", "$"]
TGT = ["▁die", "▁Katze", "</s>"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def weights(*shape: int) -> np.ndarray:
    w = np.random.default_rng(0).random(shape)
    return w / w.sum(-1, keepdims=True)


def svg_text(path) -> str:
    """All text of an SVG file, which must parse as XML."""
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    return " ".join(t for t in root.itertext())


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_format_follows_the_suffix(tmp_path, suffix):
    path = plot_heatmap(weights(3, 4), SRC, TGT, tmp_path / f"map{suffix}", title="t")
    data = path.read_bytes()
    if suffix == ".png":
        assert data.startswith(PNG_MAGIC)
    elif suffix == ".pdf":
        assert data.startswith(b"%PDF")
    else:
        text = svg_text(path)
        for label in [*SRC, *TGT, ROWS, COLUMNS]:
            assert label in text


def test_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown picture format '.jpg'"):
        plot_heatmap(weights(3, 4), SRC, TGT, tmp_path / "map.jpg")


def test_heatmap_shape_mismatch_names_both_sides(tmp_path):
    with pytest.raises(ValueError, match=r"\(4, 3\) do not match 3 query \(row\) and 4 key"):
        plot_heatmap(weights(4, 3), SRC, TGT, tmp_path / "map.png")
    with pytest.raises(ValueError, match=r"must be \(T_out, S\)"):
        plot_heatmap(weights(2, 3, 4), SRC, TGT, tmp_path / "map.png")


def test_heads_grid_labels_every_token_and_head(tmp_path):
    w = torch.tensor(weights(5, 3, 4), dtype=torch.float32, requires_grad=True)
    path = plot_heads(w, TGT, SRC, tmp_path / "heads.svg", title="layer 0")
    text = svg_text(path)
    for label in [*SRC, *TGT, ROWS, COLUMNS, "head 0", "head 4", "layer 0"]:
        assert label in text
    assert plot_heads(w, TGT, SRC, tmp_path / "heads.png").read_bytes().startswith(PNG_MAGIC)


def test_heads_shape_errors(tmp_path):
    with pytest.raises(ValueError, match=r"must be \(H, Tq, Tk\)"):
        plot_heads(weights(3, 4), TGT, SRC, tmp_path / "h.png")
    with pytest.raises(ValueError, match="do not match 3 query"):
        plot_heads(weights(2, 4, 4), TGT, SRC, tmp_path / "h.png")


def test_overview_is_a_layers_by_heads_grid(tmp_path):
    layers = [weights(2, 4, 4) for _ in range(3)]
    path = plot_overview(layers, SRC, tmp_path / "overview.svg", title="overview")
    text = svg_text(path)
    for label in [*SRC, "layer 0", "layer 2", "head 1", ROWS, COLUMNS, "overview"]:
        assert label in text
    assert "layer 3" not in text and "head 2" not in text
    pdf = plot_overview(layers, SRC, tmp_path / "overview.pdf")
    assert pdf.read_bytes().startswith(b"%PDF")


def test_overview_of_cross_attention_takes_key_labels(tmp_path):
    layers = [weights(2, 3, 4) for _ in range(2)]
    text = svg_text(plot_overview(layers, TGT, tmp_path / "o.svg", k_labels=SRC))
    assert all(label in text for label in [*SRC, *TGT])
    with pytest.raises(ValueError, match=r"\(2, 2, 3, 4\) do not match 4 query \(row\) and 4 key"):
        plot_overview(layers, SRC, tmp_path / "o.png")


def test_overview_shape_errors(tmp_path):
    with pytest.raises(ValueError, match="no layers"):
        plot_overview([], SRC, tmp_path / "o.png")
    with pytest.raises(ValueError, match=r"layer 1 has shape \(3, 4, 4\)"):
        plot_overview([weights(2, 4, 4), weights(3, 4, 4)], SRC, tmp_path / "o.png")
    with pytest.raises(ValueError, match="layer 0 has shape"):
        plot_overview([weights(1, 2, 4, 4)], SRC, tmp_path / "o.png")


def test_plot_translation_labels_the_end_of_sentence_row(tmp_path):
    tr = Translation(
        source="the cat sat $",
        outputs=["die Katze"],
        scores=[-1.0],
        src_pieces=SRC,
        tgt_pieces=[TGT[:2]],
        finished=[True],
        attention=[{"cross": torch.tensor(weights(2, 3, 4), dtype=torch.float32)}],
    )
    text = svg_text(plot_translation(tr, "cross", tmp_path / "tr.svg", head=1))
    assert all(label in text for label in [*SRC, *TGT, "die Katze"])
    with pytest.raises(ValueError, match="no attention named 'self'"):
        plot_translation(tr, "self", tmp_path / "tr.png")


def test_plot_record_takes_a_bare_record_labelled_or_not(tmp_path):
    layers = [torch.tensor(weights(2, 3, 4), dtype=torch.float32) for _ in range(2)]
    record = AttentionRecord({"cross": layers}, {"cross": (TGT, SRC)})
    text = svg_text(plot_record(record, "cross", tmp_path / "r.svg", layer=0, title="a title"))
    assert all(label in text for label in [*SRC, *TGT, "a title  (cross, layer 0)"])
    plain = svg_text(plot_record(AttentionRecord({"self": layers}), "self", tmp_path / "p.svg"))
    assert "self, layer 1" in plain and "▁cat" not in plain  # positions label the axes
    with pytest.raises(ValueError, match=r"no attention named 'encoder' \(it has \['cross'\]\)"):
        plot_record(record, "encoder", tmp_path / "e.png")
