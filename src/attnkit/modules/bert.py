"""A BERT encoder (Devlin et al. 2019) on attnkit's Transformer layers, loadable from Hugging Face.

Embed -> Encode: ``word + position + token-type`` embeddings, LayerNorm and dropout (Devlin et
al. 2019 §3, Fig. 2), then ``L`` post-LN :class:`~attnkit.modules.TransformerEncoderLayer`
blocks (Vaswani et al. 2017 §3.1) with exact GELU. :meth:`BertEncoder.from_pretrained_dir`
reads a Hugging Face ``config.json`` + ``model.safetensors`` directory (never pickles), so
attnkit's attention can be checked against a real pretrained model and its maps drawn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from attnkit.attention import key_padding_mask
from attnkit.modules import TransformerEncoder, TransformerEncoderLayer


@dataclass
class BertConfig:
    """Sizes of a BERT encoder (defaults: BERT-base)."""

    vocab_size: int = 30522  # WordPiece vocabulary
    hidden_size: int = 768  # D
    num_layers: int = 12  # L
    num_heads: int = 12  # H
    intermediate_size: int = 3072  # inner width of the feed-forward network
    max_position: int = 512  # learned absolute positions
    type_vocab_size: int = 2  # segment A / B
    layer_norm_eps: float = 1e-12
    hidden_dropout: float = 0.1  # embeddings, sub-layer outputs, inside the FFN
    attention_dropout: float = 0.1  # on the attention weights
    activation: str = "gelu"  # exact (erf) GELU, as Hugging Face's "gelu"

    # Hugging Face config.json key -> field of this class.
    HF_KEYS = {
        "vocab_size": "vocab_size",
        "hidden_size": "hidden_size",
        "num_hidden_layers": "num_layers",
        "num_attention_heads": "num_heads",
        "intermediate_size": "intermediate_size",
        "max_position_embeddings": "max_position",
        "type_vocab_size": "type_vocab_size",
        "layer_norm_eps": "layer_norm_eps",
        "hidden_dropout_prob": "hidden_dropout",
        "attention_probs_dropout_prob": "attention_dropout",
        "hidden_act": "activation",
    }

    @classmethod
    def from_hf_config_dict(cls, hf: dict) -> BertConfig:
        """Read the fields of a Hugging Face BERT ``config.json`` (other keys are ignored).

        Raises ``ValueError`` for settings this encoder does not implement (non-absolute
        positions, a decoder, an activation other than exact GELU or ReLU).
        """
        if hf.get("model_type", "bert") != "bert":
            raise ValueError(f"expected model_type 'bert', got {hf.get('model_type')!r}")
        if hf.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(
                f"position_embedding_type {hf['position_embedding_type']!r} is not supported; "
                "only 'absolute' learned positions are implemented"
            )
        if hf.get("is_decoder") or hf.get("add_cross_attention"):
            raise ValueError("decoder / cross-attention BERT configs are not supported")
        if hf.get("hidden_act", "gelu") not in ("gelu", "relu"):
            raise ValueError(
                f"hidden_act {hf['hidden_act']!r} is not supported; use 'gelu' (exact) or 'relu'"
            )
        return cls(**{ours: hf[theirs] for theirs, ours in cls.HF_KEYS.items() if theirs in hf})


@dataclass
class BertOutput:
    """What :class:`BertEncoder` returns.

    Attributes:
        last_hidden: ``(B, T, D)`` the last layer's output.
        hidden_states: ``L + 1`` tensors ``(B, T, D)``: the embedding output, then each layer's
            output (as Hugging Face's ``output_hidden_states``).
        attentions: ``L`` tensors ``(B, H, T, T)``, each layer's self-attention weights (query
            rows, key columns; padding keys get weight 0), or ``None`` unless ``need_weights``.
    """

    last_hidden: Tensor
    hidden_states: tuple[Tensor, ...]
    attentions: tuple[Tensor, ...] | None = None


class BertEncoder(nn.Module):
    """BERT's embeddings and Transformer encoder, without the pooler or pre-training heads."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.config = config
        d = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, d)
        self.position_embeddings = nn.Embedding(config.max_position, d)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, d)
        self.embed_norm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.embed_dropout = nn.Dropout(config.hidden_dropout)
        layer = TransformerEncoderLayer(
            d,
            config.num_heads,
            config.intermediate_size,
            dropout=config.hidden_dropout,
            activation=config.activation,
            norm_first=False,  # BERT is post-LN
            layer_norm_eps=config.layer_norm_eps,
            attention_dropout=config.attention_dropout,
        )
        self.encoder = TransformerEncoder.from_layer(layer, config.num_layers)

    def embed(self, input_ids: Tensor, token_type_ids: Tensor | None = None) -> Tensor:
        """``LayerNorm(E_word + E_position + E_type)`` -> ``(B, T, D)`` (Devlin 2019, Fig. 2)."""
        _, t = input_ids.shape
        if t > self.config.max_position:
            raise ValueError(f"sequence length {t} exceeds max_position={self.config.max_position}")
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        positions = torch.arange(t, device=input_ids.device)  # (T,)
        x = (
            self.word_embeddings(input_ids)  # (B, T, D)
            + self.position_embeddings(positions)  # (T, D), broadcast over B
            + self.token_type_embeddings(token_type_ids)  # (B, T, D)
        )
        return self.embed_dropout(self.embed_norm(x))

    def forward(
        self,
        input_ids: Tensor,
        attention_mask: Tensor | None = None,
        token_type_ids: Tensor | None = None,
        need_weights: bool = False,
    ) -> BertOutput:
        """Encode ``input_ids (B, T)``.

        Args:
            attention_mask: ``(B, T)``, 1/True at real tokens and 0/False at padding (Hugging
                Face's convention); ``None`` means no padding.
            token_type_ids: ``(B, T)`` segment ids; zeros by default.
            need_weights: return every layer's weights ``(B, H, T, T)``; without them each
                layer runs the fused ``scaled_dot_product_attention`` kernel.
        """
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (B, T), got shape {tuple(input_ids.shape)}")
        mask = None
        if attention_mask is not None:
            if attention_mask.shape != input_ids.shape:
                raise ValueError(
                    f"attention_mask {tuple(attention_mask.shape)} must match input_ids "
                    f"{tuple(input_ids.shape)}"
                )
            mask = key_padding_mask(attention_mask.bool())  # (B, 1, 1, T), True = real key
        x = self.embed(input_ids, token_type_ids)  # (B, T, D)
        out = self.encoder(x, mask, need_weights=need_weights, output_hidden_states=True)
        return BertOutput(out.last_hidden, out.hidden_states, out.attentions)

    @classmethod
    def from_pretrained_dir(cls, path: str | Path) -> BertEncoder:
        """Build from a Hugging Face directory with ``config.json`` and ``model.safetensors``.

        The weights are read with ``safetensors`` (no pickle). Returns the model in eval mode.
        """
        try:
            from safetensors.torch import load_file
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError("loading pretrained weights needs `pip install safetensors`") from err
        path = Path(path)
        for name in ("config.json", "model.safetensors"):
            if not (path / name).is_file():
                raise FileNotFoundError(f"{path / name} not found (need a Hugging Face BERT dir)")
        config = BertConfig.from_hf_config_dict(json.loads((path / "config.json").read_text()))
        model = cls(config)
        load_hf_bert_weights(model, load_file(str(path / "model.safetensors")))
        return model.eval()


# Prefixes that wrap BertModel's own names: BertFor* models and sentence-transformers.
HF_PREFIXES = ("0.auto_model.", "bert.")
# Hugging Face keys with no counterpart here: the pooler, pre-training heads, a buffer.
HF_IGNORED = ("pooler.", "cls.", "embeddings.position_ids")

_EMBEDDINGS = {
    "embeddings.word_embeddings.weight": "word_embeddings.weight",
    "embeddings.position_embeddings.weight": "position_embeddings.weight",
    "embeddings.token_type_embeddings.weight": "token_type_embeddings.weight",
    "embeddings.LayerNorm.weight": "embed_norm.weight",
    "embeddings.LayerNorm.bias": "embed_norm.bias",
}
_LAYER = {
    "attention.self.query": "self_attn.q_proj",
    "attention.self.key": "self_attn.k_proj",
    "attention.self.value": "self_attn.v_proj",
    "attention.output.dense": "self_attn.out_proj",
    "attention.output.LayerNorm": "norm1",
    "intermediate.dense": "linear1",
    "output.dense": "linear2",
    "output.LayerNorm": "norm2",
}
_LAYER_KEY = re.compile(r"encoder\.layer\.(\d+)\.(.+)\.(weight|bias|gamma|beta)")
_OLD_NORM_NAMES = {"gamma": "weight", "beta": "bias"}  # early TF-converted checkpoints


def hf_to_attnkit_name(name: str) -> str | None:
    """attnkit's parameter name for a Hugging Face BERT key (prefix already removed), or None."""
    if name in _EMBEDDINGS:
        return _EMBEDDINGS[name]
    if name.startswith("embeddings.LayerNorm."):
        leaf = name.rsplit(".", 1)[1]
        return f"embed_norm.{_OLD_NORM_NAMES[leaf]}" if leaf in _OLD_NORM_NAMES else None
    match = _LAYER_KEY.fullmatch(name)
    if match is None or match.group(2) not in _LAYER:
        return None
    index, module, leaf = match.groups()
    leaf = _OLD_NORM_NAMES.get(leaf, leaf)
    return f"encoder.layers.{index}.{_LAYER[module]}.{leaf}"


def load_hf_bert_weights(model: BertEncoder, state_dict: dict[str, Tensor]) -> list[str]:
    """Copy Hugging Face BERT weights into ``model`` in place.

    Accepts keys of ``BertModel`` (``embeddings.*``, ``encoder.layer.N.*``), optionally under a
    ``"bert."`` or ``"0.auto_model."`` prefix. Pooler / pre-training head keys are skipped.

    Returns:
        the Hugging Face keys that were skipped.

    Raises:
        KeyError: listing every missing and unexpected key, if the names do not match exactly.
        ValueError: listing every shape mismatch.
    """
    mapped: dict[str, Tensor] = {}
    source: dict[str, str] = {}  # attnkit name -> checkpoint key
    skipped, unexpected = [], []
    for key, tensor in state_dict.items():
        name = next((key[len(p) :] for p in HF_PREFIXES if key.startswith(p)), key)
        if name.startswith(HF_IGNORED):
            skipped.append(key)
            continue
        target = hf_to_attnkit_name(name)
        if target is None or target in mapped:
            unexpected.append(key)
        else:
            mapped[target], source[target] = tensor, key
    own = model.state_dict()
    missing = sorted(set(own) - set(mapped))
    unexpected += sorted(source[t] for t in set(mapped) - set(own))  # e.g. too many layers
    if missing or unexpected:
        raise KeyError(
            "Hugging Face BERT weights do not match BertEncoder: "
            f"missing {missing or 'none'}; unexpected {unexpected or 'none'}"
        )
    mismatched = [
        f"{k}: checkpoint {tuple(v.shape)} vs model {tuple(own[k].shape)}"
        for k, v in mapped.items()
        if v.shape != own[k].shape
    ]
    if mismatched:
        raise ValueError(
            "shape mismatch (does config.json match the weights?): " + "; ".join(mismatched)
        )
    model.load_state_dict(mapped, strict=True)
    return skipped


__all__ = [
    "BertConfig",
    "BertEncoder",
    "BertOutput",
    "hf_to_attnkit_name",
    "load_hf_bert_weights",
]
