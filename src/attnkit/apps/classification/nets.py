"""Text classifiers that return per-token attention weights: Embed -> Encode -> Attend -> Predict.

- :class:`RNNAttentionClassifier`: a bidirectional GRU/LSTM whose states are pooled by the
  word-level attention of Yang et al. 2016 (Hierarchical Attention Networks, §2.2, eqs. (5)-(7)):
  ``u_t = tanh(W_w h_t + b_w)``, ``a_t = softmax(u_t^T u_w)``, ``s = sum_t a_t h_t``.
- :class:`TransformerClassifier`: a Transformer encoder (Vaswani et al. 2017) over a class token
  and the words; the class token's final state is classified (Devlin et al. 2019 §3;
  Dosovitskiy et al. 2021 eq. (4)).
- :class:`BertClassifier`: the pretrained :class:`~attnkit.modules.bert.BertEncoder` with a linear
  head on ``[CLS]`` (Devlin et al. 2019 §4.1).

Every model takes the *content* token ids ``(B, T)`` and a keep-mask ``(B, T)`` (True = real
token) and adds its own special tokens. :class:`ClassifierOutput.token_weights` ``(B, T)`` is the
attention the prediction reads over the content tokens: the pooling weights ``a_t`` for the RNN;
for the Transformers the last layer's class-token query row, mean over heads, restricted to the
content tokens and renormalised to sum to 1. ``input_embedding`` is the token table whose output
gradient-based importance differentiates; ``content_offset`` is where content starts in it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnkit.attention import attend, key_padding_mask
from attnkit.modules import TransformerEncoder, TransformerEncoderLayer
from attnkit.modules.bert import BertConfig, BertEncoder
from attnkit.modules.embeddings import TransformerEmbedding
from attnkit.modules.rnn import RNNEncoder


@dataclass
class ClassifierOutput:
    """``logits (B, C)``; ``token_weights (B, T)`` over content tokens (0 at padding);
    ``attentions``: every layer's ``(B, H, T', T')`` for the Transformers (None for the RNN)."""

    logits: Tensor
    token_weights: Tensor
    attentions: tuple[Tensor, ...] | None = None


class AttentionPooling(nn.Module):
    """Word attention of Yang et al. 2016, eqs. (5)-(7), on :func:`attnkit.attention.attend`.

    ``u_t = tanh(W_w h_t + b_w)`` are the keys, the learned word-level context vector ``u_w`` is
    the single query, the dot score gives ``a_t = softmax_t(u_t^T u_w)`` and the values are the
    annotations ``h_t``, so ``s = sum_t a_t h_t``.
    """

    def __init__(self, d_input: int, d_attention: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d_input, d_attention)  # W_w, b_w
        self.context = nn.Parameter(torch.randn(d_attention) * d_attention**-0.5)  # u_w

    def forward(self, h: Tensor, keep: Tensor) -> tuple[Tensor, Tensor]:
        """``h (B, T, D)``, ``keep (B, T)`` -> summary ``s (B, D)`` and weights ``a (B, T)``."""
        u = torch.tanh(self.proj(h))  # (B, T, A)
        query = self.context.expand(h.size(0), 1, -1)  # (B, 1, A)
        out = attend(query, u, h, keep[:, None, :], score="dot")  # context (B, 1, D)
        return out.context.squeeze(1), out.weights.squeeze(1)  # (B, D), (B, T)


class RNNAttentionClassifier(nn.Module):
    """Bidirectional GRU/LSTM + :class:`AttentionPooling` + a linear layer (Yang et al. 2016)."""

    content_offset = 0

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        *,
        embed_dim: int = 128,
        hidden_dim: int = 128,
        attention_dim: int = 128,
        num_layers: int = 1,
        cell: str = "gru",
        dropout: float = 0.3,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        self.encoder = RNNEncoder(
            vocab_size,
            embed_dim,
            hidden_dim,
            num_layers=num_layers,
            dropout=dropout,
            cell=cell,
            bidirectional=True,
            bridge=False,
            pad_id=pad_id,
        )
        self.pool = AttentionPooling(self.encoder.output_dim, attention_dim)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(self.encoder.output_dim, num_classes)

    @property
    def input_embedding(self) -> nn.Embedding:
        return self.encoder.embed

    def encode(self, ids: Tensor, keep: Tensor) -> Tensor:
        """Annotations ``h_t = [h_t^fwd; h_t^bwd]``, ``(B, T, 2H)`` (Yang et al. 2016 eq. (4))."""
        return self.encoder(ids, keep)[0]

    def predict_from(self, h: Tensor, weights: Tensor) -> Tensor:
        """Logits ``(B, C)`` from annotations ``h (B, T, D)`` pooled with given ``weights
        (B, T)``: the intervention behind the permutation test (Jain & Wallace 2019 §4.2)."""
        summary = (weights.unsqueeze(1) @ h).squeeze(1)  # (B, D)
        return self.head(self.dropout(summary))

    def forward(self, ids: Tensor, keep: Tensor) -> ClassifierOutput:
        h = self.encode(ids, keep)  # (B, T, 2H)
        summary, weights = self.pool(h, keep)  # (B, 2H), (B, T)
        return ClassifierOutput(self.head(self.dropout(summary)), weights)


def _class_token_weights(attentions: tuple[Tensor, ...], keep: Tensor, start: int) -> Tensor:
    """The last layer's class-token row, mean over heads, on the content tokens ``start ..
    start + T - 1``, renormalised: ``(B, T)``."""
    row = attentions[-1][:, :, 0, :].mean(dim=1)  # (B, T')
    content = row[:, start : start + keep.size(1)] * keep  # (B, T)
    return content / content.sum(dim=1, keepdim=True).clamp_min(1e-12)


class TransformerClassifier(nn.Module):
    """A class token ``<cls>`` + the words -> pre-LN Transformer encoder -> linear on the class
    token's output (Devlin et al. 2019 §3; Dosovitskiy et al. 2021 eqs. (1)-(4))."""

    content_offset = 1

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        *,
        d_model: int = 128,
        num_heads: int = 4,
        d_ff: int = 256,
        num_layers: int = 2,
        dropout: float = 0.1,
        positional: str = "learned",
        max_len: int = 512,
        pad_id: int = 0,
        cls_id: int = 2,
    ) -> None:
        super().__init__()
        self.cls_id = cls_id
        self.embedding = TransformerEmbedding(
            vocab_size,
            d_model,
            positional=positional,
            max_len=max_len + 1,
            dropout=dropout,
            pad_id=pad_id,
        )
        layer = TransformerEncoderLayer(d_model, num_heads, d_ff, dropout, norm_first=True)
        self.encoder = TransformerEncoder.from_layer(layer, num_layers, nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, num_classes)

    @property
    def input_embedding(self) -> nn.Embedding:
        return self.embedding.token

    def forward(self, ids: Tensor, keep: Tensor) -> ClassifierOutput:
        cls = torch.full_like(ids[:, :1], self.cls_id)  # (B, 1)
        full = torch.cat([cls, ids], dim=1)  # (B, 1 + T)
        full_keep = torch.cat([torch.ones_like(keep[:, :1]), keep], dim=1)  # (B, 1 + T)
        x = self.embedding(full)  # (B, 1 + T, D)
        out = self.encoder(x, key_padding_mask(full_keep), need_weights=True)
        logits = self.head(out.last_hidden[:, 0])  # (B, C)
        return ClassifierOutput(
            logits, _class_token_weights(out.attentions, keep, 1), out.attentions
        )


class BertClassifier(nn.Module):
    """``[CLS] words [SEP]`` -> :class:`BertEncoder` -> dropout -> linear on ``[CLS]``
    (Devlin et al. 2019 §4.1, the single-sentence classification setup)."""

    content_offset = 1

    def __init__(self, config: BertConfig, num_classes: int, *, cls_id: int, sep_id: int) -> None:
        super().__init__()
        self.bert = BertEncoder(config)
        self.cls_id, self.sep_id = cls_id, sep_id
        self.dropout = nn.Dropout(config.hidden_dropout)
        self.head = nn.Linear(config.hidden_size, num_classes)

    @property
    def input_embedding(self) -> nn.Embedding:
        return self.bert.word_embeddings

    def forward(self, ids: Tensor, keep: Tensor) -> ClassifierOutput:
        b = ids.size(0)
        lengths = keep.sum(dim=1)  # (B,)
        cls = torch.full_like(ids[:, :1], self.cls_id)  # (B, 1)
        full = torch.cat([cls, ids * keep, torch.zeros_like(cls)], dim=1)  # (B, T + 2)
        full[torch.arange(b), lengths + 1] = self.sep_id  # [SEP] right after the last word
        full_keep = torch.cat(
            [torch.ones_like(keep[:, :1]), keep, torch.zeros_like(keep[:, :1])], 1
        )
        full_keep[torch.arange(b), lengths + 1] = True  # (B, T + 2)
        out = self.bert(full, full_keep, need_weights=True)
        logits = self.head(self.dropout(out.last_hidden[:, 0]))  # (B, C)
        return ClassifierOutput(
            logits, _class_token_weights(out.attentions, keep, 1), out.attentions
        )
