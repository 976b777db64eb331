"""``attnkit translation align extract MODEL_DIR``: word alignments from a Hugging Face
encoder-decoder's cross-attention (issue 36, item 6), on tiny random MarianMT models saved with
offline tokenizers: the word-level attention equals a hand computation from the eager forward's
``cross_attentions``, and forced attention gives the documented links (plain, Shift-Att, both
ways)."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from attnkit.apps.translation.align.extract import extract_links, run_attention
from attnkit.cli import app
from attnkit.interpret.agreement import agreement_links
from attnkit.interpret.alignments import read_pharaoh

transformers = pytest.importorskip("transformers", reason="needs transformers (test extra)")
tk = pytest.importorskip("tokenizers")

SPECIAL = ["<pad>", "</s>", "<unk>"]  # ids 0, 1, 2: Marian's start token is <pad>
PAIRS = [
    ("the unbelievable dog sleeps", "der unglaubliche Hund schläft"),
    ("a cat", "eine Katze"),
    ("the dog sees a sleeping cat", "der Hund sieht eine schlafende Katze"),
]


def _wrap(tok) -> object:
    tok.post_processor = tk.processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 1)]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )


def sentencepiece_like():
    """A Unigram tokenizer with the Metaspace pre-tokenizer (SentencePiece's ``▁``), small
    enough that most words split into several pieces."""
    tok = tk.Tokenizer(tk.models.Unigram())
    tok.pre_tokenizer, tok.decoder = tk.pre_tokenizers.Metaspace(), tk.decoders.Metaspace()
    text = [s for pair in PAIRS for s in pair] * 3
    tok.train_from_iterator(
        text, tk.trainers.UnigramTrainer(vocab_size=40, special_tokens=SPECIAL, unk_token="<unk>")
    )
    return _wrap(tok)


def word_level(words):
    """One piece per word; the ``Whitespace`` pre-tokenizer splits punctuation off."""
    vocab = {w: i for i, w in enumerate([*SPECIAL, *words])}
    tok = tk.Tokenizer(tk.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tk.pre_tokenizers.Whitespace()
    return _wrap(tok)


def save_marian(folder, tokenizer, sharpen: float = 1.0):
    """A tiny random MarianMTModel (2 layers, 2 heads) and ``tokenizer`` saved to ``folder``;
    ``sharpen`` scales the cross-attention's query and key projections (random init gives
    near-uniform attention, which a wrong row or column would hardly change)."""
    config = transformers.MarianConfig(
        vocab_size=len(tokenizer), d_model=16, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
        decoder_ffn_dim=32, max_position_embeddings=64, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0, forced_eos_token_id=None,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.MarianMTModel(config).eval()
    with torch.no_grad():
        for layer in model.model.decoder.layers:
            layer.encoder_attn.q_proj.weight.mul_(sharpen)
            layer.encoder_attn.k_proj.weight.mul_(sharpen)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def marian_tokenizer(folder):
    """Marian's own slow SentencePiece ``MarianTokenizer`` (what Helsinki-NLP folders ship),
    from a SentencePiece model trained here on the pairs."""
    spm = pytest.importorskip("sentencepiece")
    text = [s for pair in PAIRS for s in pair] * 3
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text), model_prefix=str(folder / "sp"), vocab_size=40,
        hard_vocab_limit=False, bos_id=-1, eos_id=-1, unk_id=0, minloglevel=2,
    )  # fmt: skip
    sp = spm.SentencePieceProcessor(model_file=str(folder / "sp.model"))
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    vocab = [*SPECIAL, *(p for p in pieces if p != "<unk>")]
    (folder / "vocab.json").write_text(json.dumps({p: i for i, p in enumerate(vocab)}))
    model = str(folder / "sp.model")
    return transformers.MarianTokenizer(model, model, str(folder / "vocab.json"))


def word_ids(tok, enc) -> list[int | None]:
    """Each piece's word: the fast tokenizer's ``word_ids()``, or by hand from the ``▁`` that
    starts a SentencePiece word; ``None`` for EOS."""
    if tok.is_fast:
        return enc.word_ids()
    out, word = [], -1
    for piece in tok.convert_ids_to_tokens(enc["input_ids"]):
        word += piece.startswith("▁") or word < 0
        out.append(None if piece in tok.all_special_tokens else word)
    return out


def by_hand(folder, pairs, layer="mean", head=None, shift=False):
    """The reference: each pair alone through the eager forward, ``cross_attentions`` chosen,
    pieces merged to words by :func:`word_ids` (source summed, target rows averaged, EOS
    dropped)."""
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.MarianMTModel.from_pretrained(folder, attn_implementation="eager")
    out = []
    for src, tgt in pairs:
        s, t = tok(src), tok(text_target=tgt)
        dec = torch.tensor([[0, *t["input_ids"]]])
        with torch.no_grad():
            cross = model(
                input_ids=torch.tensor([s["input_ids"]]),
                decoder_input_ids=dec,
                output_attentions=True,
            ).cross_attentions  # L x (1, H, T + 1, S)
        w = torch.stack(cross)[:, 0]  # (L, H, T + 1, S)
        w = w.mean(0) if layer == "mean" else w[layer]
        w = w.mean(0) if head is None else w[head]  # (T + 1, S)
        sw, tw = word_ids(tok, s), word_ids(tok, t)
        cols = torch.stack(
            [w[:, [p for p, x in enumerate(sw) if x == k]].sum(1) for k in range(len(src.split()))],
            1,
        )
        rows = [[p + shift for p, x in enumerate(tw) if x == k] for k in range(len(tgt.split()))]
        out.append(torch.stack([cols[r].mean(0) for r in rows]))  # (T_words, S_words)
    return out


@pytest.fixture(scope="module")
def random_marian(tmp_path_factory):
    return save_marian(tmp_path_factory.mktemp("marian"), sentencepiece_like(), sharpen=20.0)


@pytest.mark.parametrize(
    "reading", [{}, {"layer": 1, "head": 1}, {"layer": 0, "shift": True}], ids=str
)
def test_word_attention_equals_the_eager_forward_by_hand(random_marian, reading):
    tok = transformers.AutoTokenizer.from_pretrained(random_marian)
    pieces = [len(tok(s)["input_ids"]) for s, _ in PAIRS]
    assert max(pieces) > len(PAIRS[2][0].split()) + 1  # words really split into pieces
    got = run_attention(random_marian, PAIRS, **reading)  # one padded batch
    for g, ref, (src, tgt) in zip(
        got, by_hand(random_marian, PAIRS, **reading), PAIRS, strict=True
    ):
        assert g.shape == (len(tgt.split()), len(src.split()))
        torch.testing.assert_close(g.float(), ref, atol=1e-5, rtol=0)
    # one layer differs from another: the reading chose what it said
    assert not torch.allclose(run_attention(random_marian, PAIRS, layer=0)[0], got[0])


def test_the_slow_marian_tokenizer_merges_by_its_marker(tmp_path):
    folder = save_marian(tmp_path / "m", marian_tokenizer(tmp_path), sharpen=20.0)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    assert type(tok).__name__ == "MarianTokenizer" and not tok.is_fast
    assert len(tok(PAIRS[0][0])["input_ids"]) > len(PAIRS[0][0].split()) + 1  # pieces
    for reading in ({}, {"shift": True}):
        got, ref = run_attention(folder, PAIRS, **reading), by_hand(folder, PAIRS, **reading)
        for g, r in zip(got, ref, strict=True):
            torch.testing.assert_close(g.float(), r, atol=1e-5, rtol=0)


# Cross-attention forced on "a b c d" -> "x y z": rows are the decoder steps fed
# <start> x y z </s> (row k emits target word k; row 3 emits </s>), columns a b c d </s>.
FORCED = torch.tensor(
    [
        [0.70, 0.10, 0.05, 0.05, 0.10],  # emits x: a
        [0.10, 0.70, 0.05, 0.05, 0.10],  # emits y, reads x: b
        [0.05, 0.05, 0.50, 0.30, 0.10],  # emits z, reads y: c (d second, the most in d's column)
        [0.05, 0.05, 0.05, 0.75, 0.10],  # emits </s>, reads z: d
        [0.20, 0.20, 0.20, 0.20, 0.20],  # reads </s>
    ]
)


@pytest.fixture
def forced_marian(tmp_path, monkeypatch):
    from transformers.models.marian import modeling_marian

    original, calls = modeling_marian.eager_attention_forward, []

    def forced(module, query, key, value, attention_mask, **kw):
        if module.is_decoder and not module.is_causal and key.shape[-2] == FORCED.shape[1]:
            calls.append(query.shape)
            weights = FORCED.expand(*query.shape[:2], *FORCED.shape)  # (B, H, Tq, Tk)
            return (weights @ value).transpose(1, 2).contiguous(), weights
        return original(module, query, key, value, attention_mask, **kw)

    monkeypatch.setattr(modeling_marian, "eager_attention_forward", forced)
    folder = save_marian(tmp_path / "forced", word_level("a b c d x y z".split()))
    (tmp_path / "src").write_text("a b c d\n", encoding="utf-8")
    (tmp_path / "tgt").write_text("x y z\n", encoding="utf-8")
    return folder, calls


def _extract(tmp_path, folder, *options):
    out = tmp_path / "out.align"
    args = ["translation", "align", "extract", str(folder), str(tmp_path / "src")]
    result = CliRunner().invoke(app, [*args, str(tmp_path / "tgt"), "-o", str(out), *options])
    assert result.exit_code == 0, result.output
    return set(read_pharaoh(out)[0].sure)


def test_the_pharaoh_file_has_the_forced_links(tmp_path, forced_marian):
    folder, calls = forced_marian
    assert _extract(tmp_path, folder) == {(0, 0), (1, 1), (2, 2)}  # x-a, y-b, z-c
    assert len(calls) == 2  # both decoder layers' cross-attention were forced
    # Shift-Att: each target word from the step that reads it: x-b, y-c, z-d
    assert _extract(tmp_path, folder, "--shift") == {(1, 0), (2, 1), (3, 2)}
    # both ways: d, which no target word attends to most, is linked to z, which attends to it
    # most, and grow-diag keeps that link beside z-c
    assert _extract(tmp_path, folder, "--both-ways") == {(0, 0), (1, 1), (2, 2), (3, 2)}


def test_a_reverse_model_is_combined_by_product(random_marian, tmp_path):
    for name, side in (("src", 0), ("tgt", 1)):
        (tmp_path / name).write_text("".join(p[side] + "\n" for p in PAIRS), encoding="utf-8")
    options = ["--reverse-run", str(random_marian), "--symmetrisation", "product"]
    out = tmp_path / "out.align"
    args = ["translation", "align", "extract", str(random_marian), str(tmp_path / "src")]
    result = CliRunner().invoke(app, [*args, str(tmp_path / "tgt"), "-o", str(out), *options])
    assert result.exit_code == 0, result.output
    ahead = run_attention(random_marian, PAIRS)
    back = run_attention(random_marian, [(t, s) for s, t in PAIRS])
    expected = [agreement_links(f, b) for f, b in zip(ahead, back, strict=True)]
    assert [a.sure for a in read_pharaoh(out)] == expected
    assert expected != extract_links(random_marian, PAIRS)  # the reverse model counted


def test_detok_feeds_running_text_and_maps_it_back(tmp_path):
    folder = save_marian(tmp_path / "m", word_level("der Hund , weil er schläft . the dog".split()))
    pairs = [("der Hund , weil er schläft .", "the dog , the dog .")]
    plain, detok = run_attention(folder, pairs)[0], run_attention(folder, pairs, detok=True)[0]
    assert plain.shape == detok.shape == (6, 7)
    torch.testing.assert_close(plain, detok)  # the same pieces, mapped to the same tokens


def test_a_model_that_is_not_an_encoder_decoder_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "bert"
    sizes = dict(hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    transformers.BertConfig(vocab_size=30, **sizes).save_pretrained(folder)
    assert json.loads((folder / "config.json").read_text())["model_type"] == "bert"
    text = tmp_path / "s.txt"
    text.write_text("a b\n", encoding="utf-8")
    args = ["translation", "align", "extract", str(folder), str(text), str(text), "-o", "x.align"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"attnkit translation align extract: error: {folder} holds a bert model, not an "
        "encoder-decoder: alignments are read from a translation model's cross-attention "
        "(e.g. a MarianMT folder)"
    )
