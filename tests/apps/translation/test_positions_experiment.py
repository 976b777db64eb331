"""The positions experiment (issue 21): the corpus is short in training and long in test, one
run per scheme, BLEU by length, the cost table, and the position term of each scheme."""

from __future__ import annotations

import math

import pytest
import torch

from attnkit.apps.translation.experiments.position_terms import position_term
from attnkit.apps.translation.experiments.positions import (
    EDGES,
    length_split_corpus,
    run_positions,
    scheme_configs,
)
from attnkit.apps.translation.models.transformer import TransformerSeq2Seq


def test_corpus_trains_short_and_tests_long(tmp_path):
    data = length_split_corpus(tmp_path, sizes=(200, 20, 100))
    words = {
        split: [len(line.split()) for line in (data / f"{split}.en").read_text().splitlines()]
        for split in ("train", "valid", "test")
    }
    assert len(words["train"]) == 200 and len(words["test"]) == 100
    assert max(words["train"]) <= 20 and max(words["valid"]) <= 20
    assert max(words["test"]) > 40  # lengths 3 .. 50 in test
    train = set((data / "train.en").read_text().splitlines())
    assert not train & set((data / "test.en").read_text().splitlines())


def test_each_scheme_gets_its_own_config(tmp_path):
    configs = scheme_configs(tmp_path, ("absolute", "rope"), ("train.epochs=2",))
    assert configs["rope"].model.positions == "rope" and configs["rope"].name == "positions-rope"
    assert configs["absolute"].data.train == str(tmp_path / "train")
    assert configs["absolute"].train.epochs == 2
    with pytest.raises(ValueError, match="unknown position schemes"):
        scheme_configs(tmp_path, ("sinusoidal",))


def test_the_experiment_runs_end_to_end(tmp_path):
    """Two schemes on a tiny corpus for one epoch: the table has every bucket and the cost."""
    settings = ("train.epochs=1", "model.d_model=32", "model.d_ff=64", "data.vocab_size=200")
    results, costs = run_positions(
        tmp_path, ("absolute", "alibi"), overrides=settings, sizes=(300, 20, 60)
    )
    assert [r.name for r in results] == ["absolute", "alibi"]
    buckets = [row["bucket"] for row in results[0].evaluation.by_length]
    assert buckets[-1] == f"{EDGES[-2] + 1}-{EDGES[-1]}"
    assert costs[0].parameters == costs[1].parameters  # ALiBi learns nothing
    assert all(c.seconds_per_epoch > 0 and c.decode_sentences_per_second > 0 for c in costs)
    assert (tmp_path / "results.json").exists()


def tiny(positions):
    torch.manual_seed(0)
    return TransformerSeq2Seq(
        20,
        20,
        d_model=16,
        num_heads=2,
        d_ff=32,
        encoder_layers=1,
        decoder_layers=1,
        positions=positions,
    ).eval()


def sentences():
    src = torch.randint(4, 20, (3, 9), generator=torch.Generator().manual_seed(1))
    return src, torch.ones_like(src, dtype=torch.bool)


def toeplitz(term):
    """Whether every diagonal is constant: the term depends on j - i only."""
    diagonals = [term.diagonal(d, -2, -1) for d in range(1 - term.size(-1), term.size(-1))]
    return all(torch.allclose(diag, diag[..., :1], atol=1e-5) for diag in diagonals)


@pytest.mark.parametrize("positions", ["shaw", "t5", "alibi", "rope"])
def test_relative_terms_depend_on_the_offset_only(positions):
    term = position_term(tiny(positions), *sentences(), length=12)
    assert term.shape == (2, 12, 12) and toeplitz(term)


def test_alibi_term_is_minus_slope_times_distance():
    term = position_term(tiny("alibi"), *sentences(), length=5)
    distance = (torch.arange(5)[None] - torch.arange(5)[:, None]).abs().float()
    assert torch.allclose(term[0], -distance / 2**4)  # 2 heads: slopes 2^-4, 2^-8
    assert torch.allclose(term[1], -distance / 2**8)


def test_absolute_term_is_the_sinusoids_through_the_projections():
    model = tiny("absolute")
    term = position_term(model, *sentences(), length=6)
    attn = model.encoder.layers[0].self_attn
    pe = model.src_embed.position(6)[0]  # (6, 16)
    q, k = pe @ attn.q_proj.weight.T, pe @ attn.k_proj.weight.T
    head0 = q[:, :8] @ k[:, :8].T / math.sqrt(8)
    assert torch.allclose(term[0], head0, atol=1e-6)
    assert position_term(tiny("none"), *sentences(), length=6) is None


def test_length_table_divides_output_words_by_reference_words():
    from types import SimpleNamespace

    from attnkit.apps.translation.experiments.positions import length_table

    def said(source, text):
        return SimpleNamespace(source=source, text=text)

    evaluation = SimpleNamespace(
        translations=[said("a b", "x"), said("a b c", "x y z"), said(" ".join("w" * 45), "x y")],
        references=["x y", "x y", "x y z w"],
    )
    header, rows = length_table([SimpleNamespace(name="rope", evaluation=evaluation)])
    assert header == ["source words", "rope"]
    assert rows[0] == ["1-10", f"{4 / 4:.2f}"]  # (1 + 3) output words / (2 + 2) reference
    assert rows[1] == ["11-20", "-"] and rows[4] == ["41-50", "0.50"]
