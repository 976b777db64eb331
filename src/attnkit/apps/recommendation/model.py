"""SASRec, self-attentive sequential recommendation (Kang & McAuley 2018, "Self-Attentive
Sequential Recommendation", ICDM).

The flow: **Embed** (item embedding ``M_{s_t}`` scaled by ``sqrt(d)``, plus a learned position
``P_t``, dropout, padding rows zeroed: §III-A), **Encode/Attend** (``n_blocks`` causal
self-attention blocks, §III-B/C), **Predict** (a final LayerNorm, then the relevance of item
``i`` at position ``t`` is ``r_{i,t} = F_t M_i^T`` with the *shared* item embedding ``M``,
§III-D). Training is binary cross-entropy with one sampled negative per position, padding
positions ignored (§III-E). Cited by section: the paper itself was not re-read for this module
(its equation numbers and the §III-B formula below are from memory); the authors' code was.

**The block follows the authors' code** (kang205/SASRec ``model.py`` and ``modules.py``), not
the paper's pre-LN formula ``g(x) = x + Dropout(g(LayerNorm(x)))`` (§III-B). The code's
block: ``q = LN_1(x)``, ``x = q + Attn(q, x, x)``; then ``f = LN_2(x)``, ``x = f + FFN(f)``;
then ``x *= timeline mask``. The queries are normalised but the keys and values are not, and the
residuals start from the normalised input. ``block: paper`` builds the paper's formula instead,
from :class:`~attnkit.modules.TransformerEncoderLayer` with ``norm_first=True``. Either way the
attention is :class:`~attnkit.attention.MultiHeadAttention` (which has an output projection
``W^O``, as ``nn.MultiheadAttention`` in pmixer/SASRec.pytorch; the TF code has none).

**Positions count back from the most recent item**: the last slot of a ``(B, L)`` window is
position ``max_len - 1``. The authors always pad to ``max_len`` on the left, where this is
exactly their ``P_0 .. P_{n-1}``; for shorter windows it is the same as padding them to
``max_len``, so left padding never changes a real position's output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.attention import MultiHeadAttention
from attnkit.attention.masks import causal_mask, combine, key_padding_mask
from attnkit.config import Checked, bounded
from attnkit.modules import TransformerEncoderLayer
from attnkit.modules.transformer import position_wise


@dataclass
class SASRecConfig(Checked):
    """SASRec's shape. The defaults are the paper's Games (Amazon Video Games) settings, checked
    in the authors' code: kang205/SASRec ``main.py``'s argument defaults are maxlen 50,
    hidden_units 50, num_blocks 2, num_heads 1, dropout_rate 0.5 (and lr 0.001, batch 128,
    l2_emb 0), and its README trains ``Video`` (Games) "with default hyper-parameters"; only
    ml-1m changes them (maxlen 200, dropout 0.2). The paper's §IV-B text was not read here."""

    max_len: int = bounded(50, ge=1)  # n: the most recent items read [50]
    d_model: int = bounded(50, ge=1)  # d: item, position and hidden width [50]
    n_blocks: int = bounded(2, ge=1)  # self-attention blocks b [2]
    heads: int = bounded(1, ge=1)  # attention heads [1]
    dropout: float = bounded(0.5, ge=0, lt=1)  # on embeddings, attention, FFN [0.5]
    # authors: kang205/SASRec's block (LN on the queries only; residuals from the normalised
    # input); paper: pre-LN, x + Dropout(g(LN(x))) (§III-B)
    block: Literal["authors", "paper"] = "authors"

    def check(self) -> None:
        if self.d_model % self.heads:
            raise ValueError(f"heads must divide d_model ({self.d_model}), got {self.heads}")


@dataclass
class SASRecOutput:
    """``hidden (B, L, d)``: ``F`` after the final LayerNorm (zero at padding slots before it);
    ``attentions``: one ``(B, H, L, L)`` per block (``[l][b, h, i, j]``: how much position ``i``
    attends to the item at ``j``; zero rows at padding slots), or None unless asked."""

    hidden: Tensor
    attentions: tuple[Tensor, ...] | None = None


def sampled_bce(pos_logits: Tensor, neg_logits: Tensor, targets: Tensor) -> Tensor:
    """Binary cross-entropy with one negative per position (Kang & McAuley 2018, §III-E):
    ``-log sigma(r_pos) - log(1 - sigma(r_neg))``, averaged over the positions where
    ``targets (B, L)`` is True (the next item is real, not padding), as the authors' code
    averages over ``pos != 0``. Logits ``(B, L)``."""
    per_position = F.softplus(-pos_logits) + F.softplus(neg_logits)  # (B, L)
    weight = targets.to(per_position.dtype)
    return (per_position * weight).sum() / weight.sum().clamp(min=1.0)


def full_softmax_ce(hidden: Tensor, table: Tensor, pos: Tensor) -> Tensor:
    """Cross-entropy of the next item against *every* item (Klenitskiy & Vasilev 2023, "Turning
    Dross Into Gold Loss: is BERT4Rec really better than SASRec?", §3): at each position where
    ``pos (B, L)`` is an item, ``-log softmax_i(F_t M_i^T)`` at the true item, over the items
    ``1 .. V`` of ``table (V+1, d)`` (row 0, padding, is no candidate), averaged. Only those
    positions are scored, so the ``(N, V)`` logits stay as small as the data. ``hidden
    (B, L, d)``."""
    real = pos != 0  # (B, L)
    logits = hidden[real] @ table[1:].T  # (N, V): N real positions
    return F.cross_entropy(logits, pos[real] - 1)


class NextItemModel(nn.Module):
    """What SASRec and the GRU baseline share: ``forward(seq (B, L)) -> hidden (B, L, d)``
    whose position ``t`` predicts item ``t + 1``; items scored by the dot product with the
    shared item table ``item_embedding`` (id 0 = padding); the sampled BCE loss (the paper's)
    or the full-softmax cross-entropy."""

    item_embedding: nn.Embedding

    def score(self, hidden: Tensor, items: Tensor | None = None) -> Tensor:
        """``r = F M_items^T`` (§III-D). ``hidden (*, d)``; ``items``: None (every row of the
        table, padding included, ``(*, V+1)``), ``(N,)`` shared by all rows (``(*, N)``), or
        ``(*, N)`` per row (``(*, N)``)."""
        table = self.item_embedding.weight  # (V+1, d)
        if items is None:
            return hidden @ table.T  # (*, V+1)
        if items.dim() == 1:
            return hidden @ table[items].T  # (*, N)
        return torch.einsum("...d,...nd->...n", hidden, table[items])  # (*, N)

    def loss(self, seq: Tensor, pos: Tensor, neg: Tensor, objective: str = "bce") -> Tensor:
        """:func:`sampled_bce` (``objective="bce"``, the paper's) of ``seq (B, L)`` against next
        items ``pos (B, L)`` (0 where there is none) and sampled negatives ``neg (B, L)``; or
        :func:`full_softmax_ce` (``"ce"``), which ignores ``neg``."""
        hidden = self(seq)  # (B, L, d)
        if objective == "ce":
            return full_softmax_ce(hidden, self.item_embedding.weight, pos)
        pos_logits = self.score(hidden, pos.unsqueeze(-1)).squeeze(-1)  # (B, L)
        neg_logits = self.score(hidden, neg.unsqueeze(-1)).squeeze(-1)  # (B, L)
        return sampled_bce(pos_logits, neg_logits, pos != 0)

    def predict(self, seq: Tensor, items: Tensor | None = None) -> Tensor:
        """Scores of the next item after left-padded ``seq (B, L)``: :meth:`score` of the
        last position, ``(B, N)``."""
        return self.score(self(seq)[:, -1], items)


class AuthorsBlock(nn.Module):
    """One block of kang205/SASRec (``model.py``): ``q = LN_1(x)``, ``x = q + Attn(q, x, x)``
    (causal, padding keys masked), ``f = LN_2(x)``, ``x = f + FFN(f)`` with
    ``FFN(f) = Dropout(ReLU(f W_1 + b_1) W_2 + b_2)`` (§III-C), inner dropout too."""

    def __init__(self, cfg: SASRecConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.norm1 = nn.LayerNorm(d, eps=1e-8)  # the authors' epsilon
        self.self_attn = MultiHeadAttention(d, cfg.heads, dropout=cfg.dropout)
        self.norm2 = nn.LayerNorm(d, eps=1e-8)
        self.linear1, self.linear2 = nn.Linear(d, d), nn.Linear(d, d)  # W_1, W_2 (d x d)
        self.dropout, self.dropout2 = nn.Dropout(cfg.dropout), nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor, mask: Tensor, need_weights: bool):
        q = self.norm1(x)  # (B, L, d)
        out = self.self_attn(q, x, x, mask=mask, need_weights=need_weights)
        x = q + out.context  # (B, L, d)
        f = self.norm2(x)
        ffn = position_wise(f, self.linear1, self.linear2, self.dropout, "relu")
        return f + self.dropout2(ffn), out.weights


class PaperBlock(nn.Module):
    """The paper's block (§III-B): ``x + Dropout(g(LN(x)))`` for ``g`` the self-attention and
    then the feed-forward net, i.e. a pre-LN :class:`TransformerEncoderLayer` (``d_ff = d``)."""

    def __init__(self, cfg: SASRecConfig) -> None:
        super().__init__()
        self.layer = TransformerEncoderLayer(
            cfg.d_model,
            cfg.heads,
            cfg.d_model,
            dropout=cfg.dropout,
            activation="relu",
            norm_first=True,
            layer_norm_eps=1e-8,
        )

    def forward(self, x: Tensor, mask: Tensor, need_weights: bool):
        out = self.layer(x, mask, need_weights)
        return out.hidden, out.weights


class SASRec(NextItemModel):
    """SASRec over items ``1 .. n_items`` (0 = padding); see the module docstring.

    ``forward(seq)`` gives ``hidden (B, L, d)``; :meth:`encode` also the attention weights.
    """

    def __init__(self, cfg: SASRecConfig, n_items: int) -> None:
        super().__init__()
        self.config, self.n_items = cfg, n_items
        self.item_embedding = nn.Embedding(n_items + 1, cfg.d_model, padding_idx=0)  # M
        self.position_embedding = nn.Embedding(cfg.max_len, cfg.d_model)  # P
        for table in (self.item_embedding, self.position_embedding):
            nn.init.xavier_uniform_(table.weight)  # TF's default (glorot uniform)
        with torch.no_grad():
            self.item_embedding.weight[0].zero_()
        self.dropout = nn.Dropout(cfg.dropout)
        block = AuthorsBlock if cfg.block == "authors" else PaperBlock
        self.blocks = nn.ModuleList(block(cfg) for _ in range(cfg.n_blocks))
        self.final_norm = nn.LayerNorm(cfg.d_model, eps=1e-8)

    def embed(self, seq: Tensor) -> Tensor:
        """``E = sqrt(d) M_{s} + P`` (§III-A; the scale as the authors' ``embedding(scale=True)``),
        dropout, then zero at padding. ``seq (B, L)`` -> ``(B, L, d)``."""
        length = seq.size(1)
        if length > self.config.max_len:
            raise ValueError(
                f"sequences of {length} items exceed max_len={self.config.max_len}: keep the "
                "most recent max_len items"
            )
        x = self.item_embedding(seq) * math.sqrt(self.config.d_model)  # (B, L, d)
        start = self.config.max_len - length  # the last slot is position max_len - 1
        positions = torch.arange(start, self.config.max_len, device=seq.device)  # (L,)
        x = self.dropout(x + self.position_embedding(positions))  # (B, L, d)
        return x * (seq != 0).unsqueeze(-1)  # the authors' timeline mask

    def encode(self, seq: Tensor, need_weights: bool = False) -> SASRecOutput:
        """``seq (B, L)`` of item ids, left-padded with 0 -> :class:`SASRecOutput`. Position
        ``t`` sees the items at ``<= t`` (causal), never padding (its keys are masked)."""
        real = seq != 0  # (B, L)
        length = seq.size(1)
        mask = combine(causal_mask(length, device=seq.device), key_padding_mask(real))
        x = self.embed(seq)  # (B, L, d)
        attentions = []
        for block in self.blocks:
            x, weights = block(x, mask, need_weights)  # (B, L, d), (B, H, L, L) | None
            x = x * real.unsqueeze(-1)  # the timeline mask after every block
            attentions.append(weights)
        hidden = self.final_norm(x)  # (B, L, d)
        return SASRecOutput(hidden, tuple(attentions) if need_weights else None)

    def forward(self, seq: Tensor) -> Tensor:
        """``seq (B, L)`` -> ``hidden (B, L, d)``; position ``t`` predicts item ``t + 1``."""
        return self.encode(seq).hidden
