"""Issue 36's "Why", case by case, as a practitioner calls a Hugging Face model: each used to
fail in the views, and each now works through attnkit.hf.record (the messages say so)."""

from __future__ import annotations

import pytest
import torch

from attnkit.hf import eager_attention, record
from attnkit.interpret.alignments import word_attention
from attnkit.interpret.structure import AttentionRecord
from attnkit.viz import cross_view, model_view

transformers = pytest.importorskip("transformers", reason="needs transformers (test extra)")


def test_sdpa_output_points_to_record_and_record_works(bert):
    ids = torch.randint(3, 60, (1, 6))
    output = bert(ids, output_attentions=True)  # sdpa: attentions == ()
    with pytest.raises(ValueError, match=r"attnkit\.hf\.record\(model, inputs\)"):
        model_view(output)
    view = model_view(record(bert, {"input_ids": ids})[0])
    assert view.payload["shape"] == [2, 2, 6, 6]


def test_generate_outputs_point_to_record_and_record_works(gpt2, marian):
    with eager_attention(gpt2), torch.no_grad():
        greedy = gpt2.generate(torch.randint(3, 60, (1, 4)), max_new_tokens=3,
                               output_attentions=True, return_dict_in_generate=True)  # fmt: skip
    with pytest.raises(ValueError, match=r"generate\(\) output.*attnkit\.hf\.record"):
        model_view(greedy)
    assert model_view(record(gpt2, greedy)[0]).payload["shape"][2:] == [6, 6]
    src = {"input_ids": torch.randint(3, 60, (1, 5))}
    with eager_attention(marian), torch.no_grad():
        beam = marian.generate(**src, num_beams=3, max_new_tokens=4, output_attentions=True,
                               return_dict_in_generate=True)  # fmt: skip
    (rec,) = record(marian, beam, inputs=src)
    assert cross_view(rec).payload["shape"][-1] == 5  # target rows over the 5 source tokens


def test_a_padded_batch_gives_one_record_per_example_with_its_tokens(bert):
    batch = {
        "input_ids": torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]]),
        "attention_mask": torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]]),
    }
    short = record(bert, batch)[1]
    assert model_view(short, ["a", "b"]).payload["rows"] == ["a", "b"]


def test_wordpiece_record_merges_to_words_for_alignment():
    pieces = ["un", "##bel", "##ie", "##va", "##bly", "token", "##ization"]
    w = torch.softmax(torch.randn(1, 7, 7), -1)  # (H, Tq, Tk)
    rec = AttentionRecord({"cross": [w]}, {"cross": (pieces, pieces)})
    assert word_attention(rec).shape == (2, 2)  # two words, not one
