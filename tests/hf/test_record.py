"""attnkit.hf.record: a Hugging Face model's attention as the core's records, checked against
the model's own eager forward pass (padding, sdpa, generate() greedy, sampling and beam)."""

from __future__ import annotations

import pytest
import torch

from attnkit.hf import NoWeightsError, eager_attention, implementation, record

transformers = pytest.importorskip("transformers", reason="needs transformers (test extra)")


def _eager(model, **inputs):
    with eager_attention(model), torch.no_grad():
        return model(**inputs, output_attentions=True)


def _same(a, b, atol=1e-5):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape
        torch.testing.assert_close(x, y, atol=atol, rtol=0)


def test_sdpa_model_gives_the_eager_forward_and_is_restored(bert):
    ids = torch.randint(3, 60, (2, 7))
    assert implementation(bert) == "sdpa"  # transformers' default: no weights
    assert bert(ids, output_attentions=True).attentions in ((), None)
    records = record(bert, {"input_ids": ids})
    assert implementation(bert) == "sdpa"  # restored
    reference = _eager(bert, input_ids=ids).attentions  # L x (B, H, T, T)
    for b, rec in enumerate(records):
        assert rec.names == ["self"]
        _same(rec["self"], [w[b] for w in reference], atol=0)


def test_padded_batch_gives_each_example_alone(bert, gpt2):
    short, long = torch.randint(3, 60, (1, 4)), torch.randint(3, 60, (1, 7))
    for model, side in ((bert, "right"), (gpt2, "left")):
        pad = torch.zeros(1, 3, dtype=torch.long)
        padded = torch.cat([short, pad] if side == "right" else [pad, short], dim=1)
        ones, zeros = torch.ones(1, 4, dtype=torch.long), torch.zeros(1, 3, dtype=torch.long)
        mask = torch.cat([ones, zeros] if side == "right" else [zeros, ones], dim=1)
        batch = {
            "input_ids": torch.cat([padded, long]),
            "attention_mask": torch.cat([mask, torch.ones(1, 7, dtype=torch.long)]),
        }
        if model is gpt2:  # left padding: positions count from the first real token
            batch["position_ids"] = (batch["attention_mask"].cumsum(-1) - 1).clamp(min=0)
        got = record(model, batch)
        assert got[0]["self"][0].shape[-1] == 4
        _same(got[0]["self"], record(model, {"input_ids": short})[0]["self"])
        _same(got[1]["self"], record(model, {"input_ids": long})[0]["self"])


def _generate(model, ids, **kw):
    with eager_attention(model), torch.no_grad():
        return model.generate(
            ids, output_attentions=True, return_dict_in_generate=True, max_new_tokens=5, **kw
        )


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"do_sample": True, "num_return_sequences": 2},
        {"num_beams": 3, "num_return_sequences": 2},
    ],
)
def test_generated_gpt2_equals_teacher_forced_forward(gpt2, kw):
    torch.manual_seed(1)
    ids = torch.randint(3, 60, (2, 4))
    out = _generate(gpt2, ids, **kw)
    records = record(gpt2, out)
    assert len(records) == out.sequences.shape[0]
    for n, rec in enumerate(records):
        t = rec["self"][0].shape[-1]
        fed = out.sequences[n : n + 1, :t]  # the tokens fed: all but the last generated
        assert t == 4 + 5 - 1 or 2 in out.sequences[n, 4:].tolist()
        _same(rec["self"], [w[0] for w in _eager(gpt2, input_ids=fed).attentions])


@pytest.mark.parametrize("kw", [{}, {"num_beams": 3, "num_return_sequences": 2}])
def test_generated_marian_equals_teacher_forced_forward(marian, kw):
    src = torch.randint(3, 60, (2, 6))
    out = _generate(marian, src, **kw)
    records = record(marian, out, inputs={"input_ids": src})
    for n, rec in enumerate(records):
        steps = rec["cross"][0].shape[-2]
        row = n * src.shape[0] // out.sequences.shape[0]
        forward = _eager(
            marian, input_ids=src[row : row + 1], decoder_input_ids=out.sequences[n : n + 1, :steps]
        )
        _same(rec["cross"], [w[0] for w in forward.cross_attentions])
        _same(rec["self"], [w[0] for w in forward.decoder_attentions])
        _same(rec["encoder"], [w[0] for w in forward.encoder_attentions])


def test_beam_follows_beam_indices(gpt2):
    """Reading every step from row n (ignoring beam_indices) gives another record."""
    torch.manual_seed(3)
    out = _generate(gpt2, torch.randint(3, 60, (1, 4)), num_beams=4, num_return_sequences=4)
    moved = out.beam_indices[:, 1:] != out.beam_indices[:, :1]
    assert moved.any(), "the beams never reordered: choose another seed"
    records = record(gpt2, out)
    for n, rec in enumerate(records):
        t = rec["self"][0].shape[-1]
        reference = _eager(gpt2, input_ids=out.sequences[n : n + 1, :t]).attentions
        _same(rec["self"], [w[0] for w in reference])


def test_sdpa_generate_output_says_how_to_get_weights(gpt2):
    with torch.no_grad():
        out = gpt2.generate(
            torch.randint(3, 60, (1, 4)),
            max_new_tokens=2,
            output_attentions=True,
            return_dict_in_generate=True,
        )
    with pytest.raises(NoWeightsError, match="eager_attention"):
        record(gpt2, out)


@pytest.mark.parametrize("name", ["t5", "llama", "vit"])
def test_other_families(name):
    torch.manual_seed(0)
    if name == "t5":
        config = transformers.T5Config(
            vocab_size=60,
            d_model=16,
            d_kv=8,
            d_ff=32,
            num_layers=2,
            num_heads=2,
            decoder_start_token_id=0,
        )
        model = transformers.T5ForConditionalGeneration(config).eval()
        inputs = {
            "input_ids": torch.randint(3, 60, (1, 5)),
            "decoder_input_ids": torch.randint(3, 60, (1, 3)),
        }
        keys = {
            "encoder": "encoder_attentions",
            "self": "decoder_attentions",
            "cross": "cross_attentions",
        }
    elif name == "llama":
        config = transformers.LlamaConfig(
            vocab_size=60,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
        model = transformers.LlamaForCausalLM(config).eval()
        inputs, keys = {"input_ids": torch.randint(3, 60, (1, 6))}, {"self": "attentions"}
    else:
        config = transformers.ViTConfig(
            image_size=16,
            patch_size=8,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
        )
        model = transformers.ViTModel(config).eval()
        inputs, keys = {"pixel_values": torch.randn(1, 3, 16, 16)}, {"self": "attentions"}
    (rec,) = record(model, inputs)
    forward = _eager(model, **inputs)
    for ours, theirs in keys.items():
        _same(rec[ours], [w[0] for w in getattr(forward, theirs)], atol=0)
    if name == "vit":
        assert rec.labels["self"][0] == ["[CLS]", "0,0", "0,1", "1,0", "1,1"]


def test_bad_batches_say_what_to_pass(bert):
    with pytest.raises(TypeError, match="input_ids and"):
        record(bert, torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="add \\[None\\]"):
        record(bert, {"input_ids": torch.zeros(3, dtype=torch.long)})
    with pytest.raises(ValueError, match="tokenizer="):
        record(bert, {"input_ids": torch.zeros(1, 3, dtype=torch.long)}, words=True)


def test_a_training_model_is_recorded_without_dropout_and_left_training():
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=60, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, attention_probs_dropout_prob=0.5, hidden_dropout_prob=0.5,
    )  # fmt: skip
    model = transformers.BertModel(config).train()
    ids = torch.randint(3, 60, (1, 6))
    first, second = record(model, {"input_ids": ids}), record(model, {"input_ids": ids})
    assert model.training  # the caller's mode is restored
    _same(first[0]["self"], second[0]["self"], atol=0)  # no dropout: the same weights twice
    _same(first[0]["self"], [w[0] for w in _eager(model.eval(), input_ids=ids).attentions])
