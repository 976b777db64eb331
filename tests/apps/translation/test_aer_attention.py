"""Forced decoding (attnkit.apps.translation.align.forced) and the measured AER of attention
(attnkit.apps.translation.align.aer), on a tiny model trained here and on hand-made attention.

The RWTH case needs ``word-alignment/rwth-deen/DeEnGoldAlignment.tar.gz`` under
``$ATTNKIT_DATA_DIR`` or ``<repo>/../shared/data`` (see that folder's SOURCE.md).
"""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from attnkit.apps.translation.align.aer import (
    default_rwth_tarball,
    diagonal_links,
    format_table,
    links_by_method,
    rwth_aer,
    score_methods,
)
from attnkit.apps.translation.align.forced import (
    WordMismatchError,
    cross_attention,
    detokenize,
    forced_attention,
    forced_piece_attention,
    merge_to_words,
    word_pooling,
)
from attnkit.apps.translation.config import (
    ModelConfig,
)
from attnkit.apps.translation.decode.translate import translate_texts
from attnkit.apps.translation.models.build import build_model
from attnkit.interpret.alignments import Alignment, word_attention

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def pairs(make_tiny_config):
    from attnkit.apps.translation.prepare import load_configured_corpus

    corpus = load_configured_corpus(make_tiny_config().data)
    return [(p.src, p.tgt) for p in corpus.splits["valid"][:12]]


def _tiny_transformer(tokenizer):
    torch.manual_seed(0)
    cfg = ModelConfig(arch="transformer", d_model=16, num_heads=2, d_ff=32, dropout=0.0)
    cfg.encoder_layers = cfg.decoder_layers = 2
    model = build_model(cfg, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, 0)
    return model.eval()


# ------------------------------------------------------------------------- forced decoding
def test_forced_attention_has_word_shapes_and_distributions(tiny_run, pairs):
    forced = forced_attention(tiny_run.model, tiny_run.tokenizer, pairs)
    assert len(forced) == len(pairs)
    for f, (src, tgt) in zip(forced, pairs, strict=True):
        assert f.weights.shape == (len(tgt.split()), len(src.split()))
        assert f.piece_weights.shape == (len(f.tgt_pieces) + 1, len(f.src_pieces))
        assert torch.allclose(f.weights.sum(1), torch.ones(len(tgt.split()), dtype=torch.float64))
        assert (f.source_words, f.target_words) == (src.split(), tgt.split())


@pytest.mark.parametrize("arch", ["rnn", "transformer"])
def test_forced_attention_equals_greedy_attention_on_the_greedy_output(tiny_run, pairs, arch):
    tok = tiny_run.tokenizer
    model = tiny_run.model if arch == "rnn" else _tiny_transformer(tok)
    name = "cross" if arch == "rnn" else "layer1.cross"
    sources = [src for src, _ in pairs]
    greedy = translate_texts(
        model, tok, sources, tiny_run.cfg.decode, beam_size=1, need_weights=True
    )
    done = [g for g in greedy if g.outputs[0].split()]  # finished or cut at the length limit
    assert len(done) >= 3, "too few non-empty greedy outputs to compare"
    src_ids = tok.encode_src([g.source for g in done])
    tgt_ids = [[tok.tgt.piece_to_id(p) for p in g.tgt_pieces[0]] for g in done]
    layer = "mean" if arch == "rnn" else 1
    forced = forced_piece_attention(model, src_ids, tgt_ids, layer=layer)
    for f, g in zip(forced, done, strict=True):
        recorded = g.attention[0][name].mean(0)  # (T_out, S): no EOS row when cut
        torch.testing.assert_close(f[: recorded.shape[0]], recorded, atol=1e-5, rtol=1e-4)
    # at word level too, wherever re-encoding the output text gives back the greedy pieces
    words = forced_attention(model, tok, [(g.source, g.outputs[0]) for g in done], layer=layer)
    same = [k for k, g in enumerate(done) if words[k].tgt_pieces == g.tgt_pieces[0]]
    if arch == "rnn":  # the untrained Transformer's random pieces rarely re-encode alike
        assert same, "no output re-encodes to its own pieces"
    for k in same:
        expected = word_attention(done[k], name)
        torch.testing.assert_close(words[k].weights, expected, atol=1e-5, rtol=1e-4)


def test_layer_choice_of_a_transformer(tiny_run, pairs):
    model = _tiny_transformer(tiny_run.tokenizer)
    f0, f1, fm = (
        forced_attention(model, tiny_run.tokenizer, pairs[:3], layer=layer)
        for layer in (0, -1, "mean")
    )
    for a, b, m in zip(f0, f1, fm, strict=True):
        torch.testing.assert_close(m.weights, (a.weights + b.weights) / 2, atol=1e-6, rtol=1e-6)
    with pytest.raises(ValueError, match="layer 2 does not exist"):
        forced_attention(model, tiny_run.tokenizer, pairs[:1], layer=2)
    with pytest.raises(ValueError, match="no cross-attention"):
        cross_attention({"encoder.layer0": torch.ones(1, 1, 2, 2)})


# ------------------------------------------------------------------ pieces to gold words
def _piece(begin, end):
    return SimpleNamespace(begin=begin, end=end)


def test_word_pooling_follows_offsets_not_marks():
    # "ab  c,d": a bare "▁" (0, 0), "ab" (0, 2), "▁▁c" over the double space (2, 5), ",d" (5, 7)
    pieces = [_piece(0, 0), _piece(0, 2), _piece(2, 5), _piece(5, 7)]
    pool = word_pooling(pieces, [(0, 2), (4, 5), (5, 6), (6, 7)])
    expected = torch.tensor(
        [[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0.5, 0.5]], dtype=torch.float64
    )
    torch.testing.assert_close(pool, expected)


def test_word_pooling_names_the_sentence_when_a_word_gets_no_piece():
    with pytest.raises(WordMismatchError, match="sentence 7: words \\[1\\]"):
        word_pooling([_piece(0, 2)], [(0, 2), (3, 5)], "sentence 7")


def test_merge_to_words_sums_source_pieces_averages_target_pieces_and_shifts():
    # 3 target pieces (words: [0, 1], [2]) + the EOS row; 3 source pieces (words: [0], [1, 2])
    rows = torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    src = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=torch.float64)
    tgt = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    expected = torch.tensor([[0.3, 0.7], [0.0, 1.0]], dtype=torch.float64)
    torch.testing.assert_close(merge_to_words(rows, src, tgt), expected)
    shifted = torch.tensor([[0.05, 0.95], [1.0, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(merge_to_words(rows, src, tgt, shift=True), shifted)
    with pytest.raises(ValueError, match="shift needs 4 rows"):
        merge_to_words(rows[:3], src, tgt, shift=True)


def test_gold_word_counts_survive_whitespace_unknown_characters_and_detok(tiny_run):
    tok = tiny_run.tokenizer
    pairs = [
        ("Ich  glaube\u00a0nicht , daß ÿ das stimmt .", "I do n't think that 's true ( really ) ."),
    ]
    for detok in (False, True):
        (f,) = forced_attention(tiny_run.model, tok, pairs, detok=detok)
        assert f.weights.shape == (len(pairs[0][1].split()), len(pairs[0][0].split()))
        assert torch.allclose(f.weights.sum(1), torch.ones(f.weights.shape[0], dtype=torch.float64))
    assert detokenize("I do n't think ( really ) .".split()) == "I don't think (really)."


# ----------------------------------------------------------------------- extraction + AER
def test_a_maximal_diagonal_gives_the_diagonal_alignment():
    n = 5
    weights = torch.full((n, n), 0.1) + 0.5 * torch.eye(n)
    weights = weights / weights.sum(1, keepdim=True)
    diagonal = frozenset((i, i) for i in range(n))
    gold = [Alignment(diagonal)]
    methods = links_by_method([weights], [weights.T.clone()])
    assert methods["argmax"] == [diagonal]
    assert methods["reverse argmax"] == [diagonal]
    assert methods["intersection (argmax both ways)"] == [diagonal]
    assert methods["grow-diag-final (argmax both ways)"] == [diagonal]
    assert methods["threshold 0.3"] == [diagonal]
    assert diagonal_links(n, n) == diagonal
    rows = {row.method: row.scores for row in score_methods(gold, [weights], [weights.T.clone()])}
    assert rows["argmax"].aer == 0.0 and rows["union (argmax both ways)"].aer == 0.0
    assert rows["threshold 0.1"].aer > 0.0  # every link passes: low precision


def test_backward_attention_must_be_the_transposed_shape():
    with pytest.raises(ValueError, match="sentence 1"):
        links_by_method([torch.ones(2, 3) / 3], [torch.ones(2, 3) / 3])


def _rwth():
    tarball = default_rwth_tarball()
    if not tarball.is_file():
        pytest.skip(f"RWTH gold alignments not found at {tarball} (set ATTNKIT_DATA_DIR)")
    return tarball


def test_rwth_aer_end_to_end_with_the_tiny_model(tiny_run):
    _rwth()
    rows = rwth_aer(tiny_run.dir, tiny_run.dir, limit=4, check_langs=False)
    names = [row.method for row in rows]
    assert names[:3] == ["diagonal (no model)", "argmax", "threshold 0.1"]
    assert "grow-diag-final (argmax both ways)" in names
    for row in rows:
        assert 0.0 <= row.scores.aer <= 1.0 and row.scores.sentences == 4
    table = format_table(rows)
    assert table.splitlines()[0].startswith("| method | AER |") and "| argmax |" in table


def test_rwth_aer_checks_the_run_languages(tiny_run, tmp_path, make_tiny_config):
    _rwth()
    from attnkit.config import save_yaml

    cfg = make_tiny_config()
    cfg.data.corpus, cfg.data.src_lang, cfg.data.tgt_lang = "tatoeba-eng-deu", "en", "de"
    run = tmp_path / "run"
    run.mkdir()
    for name in ("model.safetensors", "spm.model"):
        (run / name).write_bytes((tiny_run.dir / name).read_bytes())
    save_yaml(cfg, run / "config.yaml")
    with pytest.raises(ValueError, match="translates en->de, but this side needs de->en"):
        rwth_aer(run, limit=2)


def test_benchmark_script_prints_a_markdown_table(tiny_run):
    _rwth()
    script = REPO / "benchmarks" / "rwth_aer.py"
    args = [sys.executable, str(script), "--run", str(tiny_run.dir), "--limit", "3"]
    out = subprocess.run([*args, "--any-langs"], capture_output=True, text=True, check=True)
    assert "rwth_aer.py --run" in out.stdout and "| argmax |" in out.stdout
