"""Sub-words merged to words for WordPiece, byte-level BPE (GPT-2) and SentencePiece
(Metaspace) tokenizers built offline, by word_ids() and by the tokenizer's marker."""

from __future__ import annotations

import pytest
import torch

from attnkit.hf import eager_attention, record
from attnkit.hf.words import marker_word_ids, merge_weights, word_labels, word_scheme

transformers = pytest.importorskip("transformers", reason="needs transformers (test extra)")
tk = pytest.importorskip("tokenizers")

TEXT = ["unbelievably good tokenization", "a tokenization"]


def _wrap(tok, **special):
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, **special)


def wordpiece():
    pieces = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "un",
        "##bel",
        "##ie",
        "##va",
        "##bly",
        "good",
        "token",
        "##ization",
        "a",
    ]
    tok = tk.Tokenizer(tk.models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]"))
    tok.normalizer = tk.normalizers.BertNormalizer()
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    tok.decoder = tk.decoders.WordPiece()
    tok.post_processor = tk.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    return _wrap(tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]")


def _trained(model, trainer, pre, decoder, **special):
    tok = tk.Tokenizer(model)
    tok.pre_tokenizer, tok.decoder = pre, decoder
    tok.train_from_iterator(TEXT * 3 + ["un believ ably good token ization"], trainer)
    return _wrap(tok, **special)


def byte_bpe():
    trainer = tk.trainers.BpeTrainer(
        vocab_size=270,
        special_tokens=["<pad>"],
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
    )
    return _trained(
        tk.models.BPE(),
        trainer,
        tk.pre_tokenizers.ByteLevel(add_prefix_space=False),
        tk.decoders.ByteLevel(),
        pad_token="<pad>",
    )


def sentencepiece():
    trainer = tk.trainers.UnigramTrainer(
        vocab_size=40, special_tokens=["<pad>", "<unk>"], unk_token="<unk>"
    )
    return _trained(
        tk.models.Unigram(),
        trainer,
        tk.pre_tokenizers.Metaspace(),
        tk.decoders.Metaspace(),
        pad_token="<pad>",
        unk_token="<unk>",
    )


TOKENIZERS = {"wordpiece": wordpiece, "byte-bpe": byte_bpe, "sentencepiece": sentencepiece}
SCHEMES = {
    "wordpiece": ("continue", "##"),
    "byte-bpe": ("start", "Ġ"),
    "sentencepiece": ("start", "▁"),
}


@pytest.mark.parametrize("name", TOKENIZERS)
def test_marker_agrees_with_word_ids(name):
    tok = TOKENIZERS[name]()
    assert word_scheme(tok) == SCHEMES[name]
    enc = tok(TEXT[0])
    tokens = tok.convert_ids_to_tokens(enc["input_ids"])
    assert len(tokens) > 3, tokens  # the words really are split
    words = [w for w in enc.word_ids()]
    expected, last = [], object()
    for w in words:  # specials (None) are words of their own
        expected.append(0 if not expected else expected[-1] + (w is None or w != last))
        last = object() if w is None else w
    assert marker_word_ids(tokens, tok) == expected


def _bert(vocab):
    config = transformers.BertConfig(
        vocab_size=vocab,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
    )
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


@pytest.mark.parametrize("name", TOKENIZERS)
def test_record_in_words(name):
    tok = TOKENIZERS[name]()
    batch = tok(TEXT, return_tensors="pt", padding=True)
    model = _bert(len(tok))
    pieces = record(model, batch, tokenizer=tok)
    words = record(model, batch, tokenizer=tok, words=True)
    for b, (p, w) in enumerate(zip(pieces, words, strict=True)):
        rows = w.labels["self"][0]
        assert [r.lower() for r in rows if r.isalpha()] == TEXT[b].split()
        ids = batch.word_ids(b)
        kept = [i for i, m in enumerate(batch["attention_mask"][b].tolist()) if m]
        group = {}
        for i in kept:
            group.setdefault(("s", i) if ids[i] is None else ids[i], []).append(kept.index(i))
        cols = list(group.values())
        for layer_p, layer_w in zip(p["self"], w["self"], strict=True):
            # the reference: keys summed over a word's pieces, query rows averaged
            ref = torch.stack([layer_p[:, :, c].sum(-1) for c in cols], -1)  # (H, Tq, Wk)
            ref = torch.stack([ref[:, r].mean(1) for r in cols], 1)  # (H, Wq, Wk)
            torch.testing.assert_close(layer_w, ref, atol=1e-6, rtol=0)
            torch.testing.assert_close(layer_w.sum(-1), torch.ones(layer_w.shape[:2]))


def test_wordpiece_without_word_ids_merges_by_marker():
    tok = wordpiece()
    ids = tok(TEXT[0], return_tensors="pt")["input_ids"]
    (rec,) = record(_bert(len(tok)), {"input_ids": ids}, tokenizer=tok, words=True)
    assert rec.labels["self"][0] == ["[CLS]", "unbelievably", "good", "tokenization", "[SEP]"]


def test_merge_weights_rows_stay_distributions():
    w = torch.softmax(torch.randn(2, 5, 5), -1)
    merged = merge_weights(w, [0, 0, 1, 2, 2], [0, 1, 1, 1, 2])
    assert merged.shape == (2, 3, 3)
    torch.testing.assert_close(merged.sum(-1), torch.ones(2, 3))
    torch.testing.assert_close(merged[:, 0, 0], (w[:, 0, 0] + w[:, 1, 0]) / 2)


def test_encoder_decoder_generate_in_words():
    tok = sentencepiece()
    tok.add_special_tokens({"eos_token": "</s>"})
    config = transformers.MarianConfig(
        vocab_size=len(tok), d_model=16, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
        decoder_ffn_dim=32, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id, forced_eos_token_id=None,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.MarianMTModel(config).eval()
    inputs = tok([TEXT[1]], return_tensors="pt")
    with eager_attention(model), torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=6, output_attentions=True,
                             return_dict_in_generate=True)  # fmt: skip
    (pieces,) = record(model, out, tokenizer=tok, inputs=inputs)
    (words,) = record(model, out, tokenizer=tok, inputs=inputs, words=True)
    src = pieces.labels["cross"][1]
    ids = marker_word_ids(src, tok)
    assert len(set(ids)) < len(ids)  # some source word is split into pieces
    assert words.labels["cross"][1] == word_labels(src, ids, tok)
    rows = marker_word_ids(pieces.labels["cross"][0], tok)
    for p, w in zip(pieces["cross"], words["cross"], strict=True):
        torch.testing.assert_close(w, merge_weights(p, rows, ids))
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:2]))
