"""Issue 35, messages: ``align extract --head 99`` names the heads there are (it was an
IndexError; ``--layer`` was already checked), and ``align score`` on empty files names them."""

import pytest
import torch
from typer.testing import CliRunner

from attnkit.apps.translation.align.forced import cross_attention
from attnkit.cli import app


def test_a_head_that_does_not_exist_is_named():
    attention = {f"layer{i}.cross": torch.rand(2, 4, 3, 5) for i in range(2)}  # (B, H, T, S)
    assert cross_attention(attention, 0, head=3).shape == (2, 3, 5)
    assert cross_attention(attention, 0, head=-4).shape == (2, 3, 5)
    with pytest.raises(ValueError, match="--head 99 does not exist: each decoder layer has 4"):
        cross_attention(attention, 0, head=99)


def test_scoring_empty_files_names_them(tmp_path):
    gold, pred = tmp_path / "gold.txt", tmp_path / "pred.txt"
    gold.write_text("", encoding="utf-8")
    pred.write_text("0-0\n", encoding="utf-8")
    args = ["translation", "align", "score", "--gold", str(gold), "--pred", str(pred)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"{gold}: no alignments (an empty file)" in result.output
    pred.write_text("", encoding="utf-8")
    result = CliRunner().invoke(app, args)
    assert f"{gold} and {pred}: no alignments" in result.output
