"""Gold word alignments of the generated corpus, Shift-Att's step offset on a toy model, and
``attnkit translation align extract`` / ``attnkit translation data generate``."""

from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from attnkit.apps.translation.align.extract import extract_links, generated_gold, write_generated
from attnkit.apps.translation.align.forced import detokenize, forced_attention
from attnkit.apps.translation.data.corpora import read_parallel
from attnkit.apps.translation.data.generated import generate_aligned_pairs, generate_pairs
from attnkit.interpret.alignments import argmax_links, read_pharaoh
from attnkit.modules.seq2seq import ModelOutput

# Written out here, independently of the generator's tables: English word -> German stem.
LEXICON = {
    "dog": "Hund", "cat": "Katze", "bird": "Vogel", "horse": "Pferd", "mouse": "Maus",
    "fox": "Fuchs", "house": "Haus", "car": "Auto", "book": "Buch", "table": "Tisch",
    "lamp": "Lampe", "apple": "Apfel", "flower": "Blume", "chair": "Stuhl", "ball": "Ball",
    "cup": "Tasse", "dogs": "Hunde", "cats": "Katzen", "mice": "Mäuse", "apples": "Äpfel",
    "red": "rot", "blue": "blau", "green": "grün", "big": "groß", "old": "alt", "new": "neu",
    "sleeps": "schläft", "sees": "sieht", "seen": "gesehen", "buys": "kauft", "has": "hat",
    "bought": "gekauft", "costs": "kostet", "euros": "Euro", "because": "weil", "and": "und",
    "although": "obwohl", "while": "während", "that": "dass", "but": "aber", "today": "heute",
    "now": "jetzt", "with": "mit", "under": "unter", "behind": "hinter", "next": "neben",
    ".": ".", ",": ",",
}  # fmt: skip
ARTICLES = {"der", "die", "das", "den", "dem"}
TENS = {"twenty": "zwanzig", "forty": "vierzig", "fifty": "fünfzig", "ninety": "neunzig"}


@pytest.fixture(scope="module")
def aligned():
    return generate_aligned_pairs(400, seed=0)


def test_tokens_spell_the_training_text_and_the_corpus_is_unchanged(aligned):
    texts = generate_pairs(400, seed=0)
    assert [p.pair for p in aligned] == texts
    for p, text in zip(aligned, texts, strict=True):
        assert detokenize(p.en) == text.src and detokenize(p.de) == text.tgt


def test_every_word_is_linked_and_sure_links_translate(aligned):
    checked = 0
    for p in aligned:
        sure, links = p.alignment.sure, p.alignment.links
        assert {i for i, _ in links} == set(range(len(p.en))), p.en
        assert {j for _, j in links} == set(range(len(p.de))), p.de
        for i, j in sure:
            en, de = p.en[i].lower(), p.de[j]
            if en == "the":
                assert de.lower() in ARTICLES, (p.en, p.de, i, j)
            elif en in ("and", "hundred"):  # "five hundred and two" -> "fünfhundertzwei"
                assert de == "und" or "hundert" in de, (en, de)
            elif en in LEXICON:
                assert de.lower().startswith(LEXICON[en].lower()), (en, de)
                checked += 1
            elif en in TENS or en.split("-")[-1] in TENS:
                assert TENS[en.split("-")[-1]] in de, (en, de)  # "forty-five" -> "...vierzig"
                checked += 1
    assert checked > 2000


def test_possible_links_mark_split_verbs_subordinate_commas_and_next_to(aligned):
    kinds = set()
    for p in aligned:
        for i, j in p.alignment.possible - p.alignment.sure:
            pair = (p.en[i].lower(), p.de[j])
            if pair[1] == ",":
                assert pair[0] in {"because", "although", "while", "that"}, pair
                kinds.add("comma")
            elif pair[0] == "to":
                assert pair[1] == "neben", pair
                kinds.add("next to")
            else:  # "has" with the participle, the participle with "hat"
                assert (pair[0] == "has") != (pair[1] == "hat"), pair
                assert pair[0] == "has" or pair[1] == "hat", pair
                kinds.add("split verb")
    assert kinds == {"comma", "next to", "split verb"}


def test_written_files_read_back_as_the_gold(tmp_path):
    write_generated(tmp_path, (30, 10, 20), seed=3)
    gold = generated_gold((30, 10, 20), seed=3)
    assert read_pharaoh(tmp_path / "test.en-de.align", one_based=True) == gold.gold
    tokens = read_parallel(tmp_path / "test.tok.en", tmp_path / "test.tok.de")
    text = read_parallel(tmp_path / "test.en", tmp_path / "test.de")
    assert [(p.src, p.tgt) for p in tokens] == list(zip(gold.source, gold.target, strict=True))
    assert [(detokenize(p.src.split()), detokenize(p.tgt.split())) for p in tokens] == text
    reverse = generated_gold((30, 10, 20), seed=3, reverse=True)
    assert reverse.source == gold.target
    assert reverse.gold[0].sure == {(j, i) for i, j in gold.gold[0].sure}


# ------------------------------------------------------------- Shift-Att on a toy model
class InputPointer(torch.nn.Module):
    """A toy decoder whose cross-attention at step ``t`` is one-hot on source position
    ``tgt_in[t] mod S``: the step's *input* token decides where it looks."""

    def forward(self, src, src_mask, tgt_in, need_weights=False):
        b, t = tgt_in.shape
        s = src.shape[1]
        weights = torch.nn.functional.one_hot(tgt_in % s, s).float()  # (B, T, S)
        return ModelOutput(torch.zeros(b, t, 5), {"cross": weights.unsqueeze(1)})


class Pieces:
    """A tokenizer whose pieces are the words themselves, with made-up ids."""

    bos_id, eos_id, pad_id = 2, 3, 0

    def __init__(self, ids):
        self.src = self.tgt = SimpleNamespace(encode=lambda text, return_type: self._proto(text))
        self.ids = ids

    def _proto(self, text):
        pieces, at = [], 0
        for word in text.split():
            start = text.index(word, at)
            pieces.append(SimpleNamespace(id=self.ids[word], piece=word, begin=start))
            pieces[-1].end = at = start + len(word)
        return SimpleNamespace(pieces=pieces)


def test_shift_att_reads_the_step_where_the_word_is_the_input():
    # source "a b c d" (4 words); target ids 5, 6, 7 point at positions 1, 2, 3 as *inputs*
    tok = Pieces({"a": 4, "b": 5, "c": 6, "d": 7, "X": 5, "Y": 6, "Z": 7})
    forced = forced_attention(InputPointer(), tok, [("a b c d", "X Y Z")], shift=True)[0]
    assert argmax_links(forced.weights) == {(1, 0), (2, 1), (3, 2)}  # X reads 5 -> position 1
    plain = forced_attention(InputPointer(), tok, [("a b c d", "X Y Z")], shift=False)[0]
    # without the shift, X is emitted at the BOS step (id 2 -> position 2), Y after reading X
    assert argmax_links(plain.weights) == {(2, 0), (1, 1), (2, 2)}


# ------------------------------------------------------------------ the command line
def test_align_extract_writes_the_links_of_the_run(tiny_run, tmp_path):
    gold = generated_gold(tiny_run.cfg.data.generated_sizes, split="valid")
    (tmp_path / "src").write_text("".join(s + "\n" for s in gold.source[:6]), encoding="utf-8")
    (tmp_path / "tgt").write_text("".join(s + "\n" for s in gold.target[:6]), encoding="utf-8")
    out = tmp_path / "pred.align"
    command = [
        sys.executable,
        "-m",
        "attnkit",
        "translation",
        "align",
        "extract",
        str(tiny_run.dir),
    ]
    command += [str(tmp_path / "src"), str(tmp_path / "tgt"), "-o", str(out), "--detok"]
    subprocess.run(command, check=True, capture_output=True, text=True)
    pairs = list(zip(gold.source[:6], gold.target[:6], strict=True))
    expected = extract_links(tiny_run.dir, pairs, detok=True)
    assert [a.sure for a in read_pharaoh(out)] == expected
    forced = forced_attention(tiny_run.model, tiny_run.tokenizer, pairs, detok=True)
    assert expected == [argmax_links(f.weights) for f in forced]
    shifted = extract_links(tiny_run.dir, pairs, detok=True, shift=True)
    forced = forced_attention(tiny_run.model, tiny_run.tokenizer, pairs, detok=True, shift=True)
    assert shifted == [argmax_links(f.weights) for f in forced] and shifted != expected
    both = extract_links(tiny_run.dir, pairs, reverse_run=tiny_run.dir, symmetrisation="union")
    assert all(f <= u for f, u in zip(extract_links(tiny_run.dir, pairs), both, strict=True))


def test_align_extract_names_the_files_on_bad_input(tiny_run, tmp_path):
    (tmp_path / "src").write_text("a b\n\nc\n", encoding="utf-8")
    (tmp_path / "tgt").write_text("x\ny\nz\n", encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "attnkit",
        "translation",
        "align",
        "extract",
        str(tiny_run.dir),
    ]
    command += [str(tmp_path / "src"), str(tmp_path / "tgt"), "-o", str(tmp_path / "o")]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 2
    assert re.search(r"src and .*tgt: sentence 2 .*source side is empty", result.stderr)
    result = subprocess.run([*command, "--layer", "top"], capture_output=True, text=True)
    assert result.returncode == 2 and "layer number" in result.stderr
    with pytest.raises(ValueError, match="unknown symmetrisation 'both'"):
        extract_links(tiny_run.dir, [("a", "b")], reverse_run=tiny_run.dir, symmetrisation="both")


def test_data_generate_command_writes_the_same_files(tmp_path):
    command = [
        sys.executable,
        "-m",
        "attnkit",
        "translation",
        "data",
        "generate",
        "--to",
        str(tmp_path / "cli"),
    ]
    command += ["--sizes", "30", "10", "20", "--seed", "3"]
    printed = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    write_generated(tmp_path / "api", (30, 10, 20), seed=3)
    names = sorted(p.name for p in (tmp_path / "api").iterdir())
    assert len(names) == 15 and sorted(p.name for p in (tmp_path / "cli").iterdir()) == names
    assert len(printed.splitlines()) == 15
    for name in names:
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "api" / name).read_bytes()


def test_both_ways_reads_rows_and_columns_of_one_attention(tiny_run, tmp_path):
    from attnkit.interpret.alignments import symmetrise

    gold = generated_gold(tiny_run.cfg.data.generated_sizes, split="valid")
    pairs = list(zip(gold.source[:5], gold.target[:5], strict=True))
    forced = forced_attention(tiny_run.model, tiny_run.tokenizer, pairs, detok=True)
    expected = [
        symmetrise(argmax_links(f.weights), argmax_links(f.weights, per="source"), "grow-diag")
        for f in forced
    ]
    assert extract_links(tiny_run.dir, pairs, detok=True, both_ways=True) == expected
    (tmp_path / "src").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (tmp_path / "tgt").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "attnkit",
        "translation",
        "align",
        "extract",
        str(tiny_run.dir),
    ]
    command += [str(tmp_path / "src"), str(tmp_path / "tgt"), "-o", str(tmp_path / "o")]
    subprocess.run([*command, "--detok", "--both-ways"], check=True, capture_output=True)
    assert [a.sure for a in read_pharaoh(tmp_path / "o")] == expected


def test_auto_layer_is_the_penultimate():
    from attnkit.apps.translation.align.extract import resolve_layer

    assert resolve_layer("auto", 6) == -2 and resolve_layer("auto", 1) == -1
    assert resolve_layer("mean", 6) == "mean" and resolve_layer(0, 6) == 0


def test_product_symmetrisation_reads_both_runs_attention(tiny_run, tmp_path):
    from attnkit.interpret.agreement import agreement_links

    gold = generated_gold(tiny_run.cfg.data.generated_sizes, split="valid")
    pairs = list(zip(gold.source[:5], gold.target[:5], strict=True))
    swapped = [(t, s) for s, t in pairs]
    ahead = forced_attention(tiny_run.model, tiny_run.tokenizer, pairs, detok=True)
    back = forced_attention(tiny_run.model, tiny_run.tokenizer, swapped, detok=True)
    expected = [agreement_links(f.weights, b.weights) for f, b in zip(ahead, back, strict=True)]
    product = dict(reverse_run=tiny_run.dir, symmetrisation="product", detok=True)
    assert extract_links(tiny_run.dir, pairs, **product) == expected
    (tmp_path / "src").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (tmp_path / "tgt").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "attnkit",
        "translation",
        "align",
        "extract",
        str(tiny_run.dir),
    ]
    command += [str(tmp_path / "src"), str(tmp_path / "tgt"), "-o", str(tmp_path / "o")]
    command += ["--detok", "--reverse-run", str(tiny_run.dir), "--symmetrisation", "product"]
    subprocess.run(command, check=True, capture_output=True)
    assert [a.sure for a in read_pharaoh(tmp_path / "o")] == expected


def test_the_reverse_run_reads_its_own_layer(monkeypatch):
    import attnkit.apps.translation.align.extract as align

    asked = []

    def attention(run, pairs, **kw):
        asked.append((run, kw["layer"]))
        return [torch.full((len(t.split()), len(s.split())), 0.5) for s, t in pairs]

    monkeypatch.setattr(align, "run_attention", attention)
    pairs = [("a b", "x y")]
    extract_links("fwd", pairs, reverse_run="bwd", layer=2, reverse_layer=4)
    extract_links("fwd", pairs, reverse_run="bwd", layer=1, symmetrisation="product")
    assert asked == [("fwd", 2), ("bwd", 4), ("fwd", 1), ("bwd", 1)]
