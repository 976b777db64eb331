"""``attnkit serve --hf MODEL_DIR`` (attnkit.hf.serve) on tiny random models saved with offline
tokenizers: the page's output equals the model's own greedy ``generate()`` (or label, or tokens),
its attention equals :func:`attnkit.hf.record` of the same input (every layer's mean and every
head), the answer stays within ``Limits.max_weights`` and says what it left out, and a folder
that is not a model is refused in one line."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import threading
import urllib.request

import pytest
import torch
from typer.testing import CliRunner

from attnkit.cli import app
from attnkit.hf import eager_attention, record
from attnkit.hf.serve import make_model_server
from attnkit.server import Limits

transformers = pytest.importorskip("transformers", reason="needs transformers (test extra)")
tk = pytest.importorskip("tokenizers")

TEXT = "the cat sat on a mat"
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _wordpiece():
    """WordPiece over single letters and three words: any lower-case text is tokenized."""
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", *LETTERS]
    pieces += [f"##{c}" for c in LETTERS]
    tok = tk.Tokenizer(tk.models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]"))
    tok.normalizer = tk.normalizers.BertNormalizer()
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    tok.decoder = tk.decoders.WordPiece()
    tok.post_processor = tk.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    special = {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]"}
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, sep_token="[SEP]", **special)


def _trained(model, trainer, pre, decoder, **special):
    tok = tk.Tokenizer(model)
    tok.pre_tokenizer, tok.decoder = pre, decoder
    tok.train_from_iterator([TEXT, "a tokenization of the good cat", LETTERS] * 3, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, **special)


def _byte_bpe():
    alphabet = tk.pre_tokenizers.ByteLevel.alphabet()
    trainer = tk.trainers.BpeTrainer(special_tokens=["<pad>"], initial_alphabet=alphabet)
    pre = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    return _trained(tk.models.BPE(), trainer, pre, tk.decoders.ByteLevel(), pad_token="<pad>")


def _unigram():
    specials = ["<pad>", "<unk>", "</s>"]
    trainer = tk.trainers.UnigramTrainer(vocab_size=60, special_tokens=specials, unk_token="<unk>")
    pre, decoder = tk.pre_tokenizers.Metaspace(), tk.decoders.Metaspace()
    special = {"pad_token": "<pad>", "unk_token": "<unk>", "eos_token": "</s>"}
    return _trained(tk.models.Unigram(), trainer, pre, decoder, **special)


T = 64  # the tiny models' positions: a long input is cut to them
BERT = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32)
GPT2 = {"n_embd": 16, "n_layer": 2, "n_head": 2}
SIDE = {"layers": 2, "attention_heads": 2, "ffn_dim": 32}  # of Marian's encoder and decoder
IDS = dict(pad_token_id=0, eos_token_id=2, decoder_start_token_id=0, forced_eos_token_id=None)
NAMES = ["sad", "glad", "mad"]
LABELS = {"id2label": dict(enumerate(NAMES)), "label2id": {n: i for i, n in enumerate(NAMES)}}


def _models():
    """``{name: (model, tokenizer)}``: BERT (plain and a classifier), GPT-2, Marian."""
    wp, bpe, uni = _wordpiece(), _byte_bpe(), _unigram()
    bert = transformers.BertConfig(vocab_size=len(wp), max_position_embeddings=T, **BERT)
    labelled = transformers.BertConfig(**(bert.to_dict() | LABELS))
    gpt2 = transformers.GPT2Config(vocab_size=len(bpe), n_positions=T, **GPT2)
    gpt2.bos_token_id = gpt2.eos_token_id = gpt2.pad_token_id = 0
    sides = {f"{side}_{k}": v for side in ("encoder", "decoder") for k, v in SIDE.items()}
    marian = transformers.MarianConfig(vocab_size=len(uni), d_model=16, **sides)
    marian.update({**IDS, "max_position_embeddings": T})
    made = {
        "bert": (transformers.BertModel, bert, wp),
        "classifier": (transformers.BertForSequenceClassification, labelled, wp),
        "gpt2": (transformers.GPT2LMHeadModel, gpt2, bpe),
        "marian": (transformers.MarianMTModel, marian, uni),
    }
    torch.manual_seed(0)
    return {name: (cls(config).eval(), tok) for name, (cls, config, tok) in made.items()}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The tiny models and their tokenizers saved as Hugging Face model folders."""
    out = {}
    for name, (model, tok) in _models().items():
        out[name] = tmp_path_factory.mktemp(name)
        model.save_pretrained(out[name])
        tok.save_pretrained(out[name])
    return out


@contextlib.contextmanager
def _served(folder, limits=None, max_new=None):
    server = make_model_server(folder, port=0, limits=limits, device="cpu", max_new=max_new)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _post(server, text):
    body, headers = json.dumps({"text": text}).encode(), {"Content-Type": "application/json"}
    request = urllib.request.Request(server.url + "api/show", body, headers, method="POST")
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


@pytest.fixture
def never_serves(monkeypatch):
    """A command that should be refused fails instead of serving until Ctrl-C."""
    fail = lambda *args: pytest.fail("the command served instead of refusing")  # noqa: E731
    monkeypatch.setattr("attnkit.server.page.serve_until_stopped", fail)


def _encode(tok, text, **cut):
    enc = tok([text], return_tensors="pt", **cut)
    return {k: enc[k] for k in ("input_ids", "attention_mask")}


def _loaded(folder, auto):
    tok = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return getattr(transformers, auto).from_pretrained(folder, local_files_only=True).eval(), tok


def _same(got, want):
    return torch.allclose(torch.tensor(got, dtype=torch.float64), want.double(), atol=1e-6)


def _check_attention(got, rec):
    """Every stack of the answer is the record's: labels, each layer's mean and every head."""
    assert [s["stack"] for s in got["attention"]] == rec.names
    for stack in got["attention"]:
        layers = rec[stack["stack"]]
        assert (stack["rows"], stack["cols"]) == tuple(list(x) for x in rec.labels[stack["stack"]])
        assert stack["first_layer"] == 0 and len(stack["layers"]) == len(layers) == 2
        for mean, heads, weights in zip(stack["layers"], stack["heads"], layers, strict=True):
            assert weights.shape[0] == 2 and _same(heads, weights)  # (H, Tq, Tk)
            assert _same(mean, weights.mean(dim=0))
    assert "layers_left_out" not in got and "heads_left_out" not in got


@pytest.mark.parametrize(
    "name, auto", [("gpt2", "AutoModelForCausalLM"), ("marian", "AutoModelForSeq2SeqLM")]
)
def test_generation_is_greedy_generate_and_its_record(folders, name, auto):
    model, tok = _loaded(folders[name], auto)
    with _served(folders[name], max_new=6) as server:
        got = _post(server, TEXT)
    enc = _encode(tok, TEXT)
    plain = model.generate(**enc, max_new_tokens=6, do_sample=False, pad_token_id=0)
    skip = enc["input_ids"].shape[-1] if name == "gpt2" else 0
    assert plain.shape[-1] - skip >= 3  # a few tokens, not an immediate end
    assert got["output"] == tok.decode(plain[0, skip:], skip_special_tokens=True)
    with eager_attention(model), torch.no_grad():
        kw = {"output_attentions": True, "return_dict_in_generate": True, "pad_token_id": 0}
        out = model.generate(**enc, max_new_tokens=6, do_sample=False, **kw)
    (rec,) = record(model, out, tokenizer=tok, inputs=enc)
    assert rec.names == (["self"] if name == "gpt2" else ["self", "cross", "encoder"])
    _check_attention(got, rec)
    assert got["details"]["input tokens"] == enc["input_ids"].shape[-1]


def test_an_encoder_shows_its_tokens_and_a_classifier_its_label(folders):
    model, tok = _loaded(folders["bert"], "AutoModel")
    with _served(folders["bert"]) as server:
        got = _post(server, TEXT)
    enc = _encode(tok, TEXT)
    assert got["output"] == " ".join(tok.convert_ids_to_tokens(enc["input_ids"][0]))
    _check_attention(got, record(model, enc, tokenizer=tok)[0])
    model, _ = _loaded(folders["classifier"], "AutoModelForSequenceClassification")
    with _served(folders["classifier"]) as server:
        got = _post(server, TEXT)
        info = json.loads(urllib.request.urlopen(server.url + "api/info", timeout=30).read())
    with torch.no_grad():
        probs = model(**enc).logits[0].softmax(-1)
    assert got["output"] == model.config.id2label[int(probs.argmax())]
    want = {model.config.id2label[i]: round(float(p), 4) for i, p in enumerate(probs)}
    assert got["details"]["probabilities"] == want
    _check_attention(got, record(model, enc, tokenizer=tok)[0])
    assert info["title"] == "BertForSequenceClassification"
    assert info["source"] == f"model {folders['classifier']}"


@pytest.mark.parametrize(
    "max_weights, layers_left, heads_left",
    [(2 * T * T, 0, 2), (4 * T * T, 0, 1), (T * T + 5, 1, 1), (T * T - 1, 2, 0)],
)
def test_a_long_input_stays_within_the_bound(folders, max_weights, layers_left, heads_left):
    text = " ".join(["the cat sat"] * 60)  # 180 word pieces
    with _served(folders["bert"], Limits(max_chars=1000, max_weights=max_weights)) as server:
        got = _post(server, text)
    assert "to 64 of its 182 tokens" in got["details"]["input cut"]
    sent = sum(len(m) * len(m[0]) for s in got["attention"] for m in s["layers"])
    sent += sum(len(h) * T * T for s in got["attention"] for h in s["heads"] if h)
    assert sent <= max_weights
    assert got.get("layers_left_out", 0) == layers_left
    assert got.get("heads_left_out", 0) == heads_left
    if layers_left == 2:
        assert got["attention"] == []
        return
    (stack,) = got["attention"]
    model, tok = _loaded(folders["bert"], "AutoModel")
    enc = _encode(tok, text, truncation=True, max_length=T)
    kept = record(model, enc, tokenizer=tok)[0]["self"][layers_left:]  # nearest the output
    assert stack["first_layer"] == layers_left
    for mean, heads, weights in zip(stack["layers"], stack["heads"], kept, strict=True):
        assert _same(mean, weights.mean(dim=0)) and (heads is None or _same(heads, weights))
    sent_heads = [False] * heads_left + [True] * (2 - layers_left - heads_left)
    assert [h is not None for h in stack["heads"]] == sent_heads


def _broken(folder, tmp_path, what):
    copy = shutil.copytree(folder, tmp_path / "model")
    gone = {"config": ["config.json"], "tokenizer": ["tokenizer.json", "tokenizer_config.json"]}
    for name in gone.get(what, []):
        (copy / name).unlink()
    return copy


@pytest.mark.parametrize(
    "what, message",
    [
        ("config", ": no config.json, so not a Hugging Face model folder"),
        ("tokenizer", ": no tokenizer files (tokenizer.json"),
        ("transformers", "attnkit serve --hf needs transformers: pip install attnkit[hf]"),
    ],
)
def test_a_folder_that_is_not_a_model_is_one_line(
    folders, tmp_path, monkeypatch, never_serves, what, message
):
    folder = _broken(folders["bert"], tmp_path, what)
    if what == "transformers":
        monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers fails
    with pytest.raises(ValueError, match="pip install" if what == "transformers" else str(folder)):
        make_model_server(folder, port=0)
    result = CliRunner().invoke(app, ["serve", "--hf", str(folder), "--port", "0"])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("attnkit serve: error: ") and message in lines[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--hf", "model"], "(not both: RUN_DIR and --hf)"),
        (["--demo", "--hf", "model"], "(not both: --hf and --demo)"),
        (["run", "--max-new", "3"], "--max-new: only with --hf MODEL_DIR"),
        (["--hf", "model", "--checkpoint", "last"], "a model folder has one set of weights"),
    ],
)
def test_serve_options_that_do_not_go_together(folders, never_serves, args, message):
    args = [str(folders["bert"]) if a == "model" else a for a in args]
    result = CliRunner().invoke(app, ["serve", *args, "--port", "0"])
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_the_page_draws_a_chosen_head(folders, browser):
    with _served(folders["bert"]) as server:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server.url)
        page.wait_for_selector("body[data-ready=true]")
        assert page.text_content("#run") == f"model {folders['bert']}"
        page.fill("#text", TEXT)
        with page.expect_response("**/api/show") as response:
            page.click("#show-btn")
        got = response.value.json()
        page.select_option("select.head", "1")
        cells = page.eval_on_selector_all(
            ".stack svg .cell", "cells => cells.map(c => Number(c.dataset.weight))"
        )
        caption = page.text_content(".stack svg .legend")
        page.close()
    (stack,) = got["attention"]
    assert caption.endswith("self, layer 1, head 1")
    assert cells == [w for row in stack["heads"][1][1] for w in row] and not errors
