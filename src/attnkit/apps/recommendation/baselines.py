"""Baselines for next-item recommendation, so SASRec's gain is measured, not assumed.

Every model answers ``predict(seq (B, L), items=None) -> (B, N)``: the scores of candidate
``items`` (``(N,)`` shared, ``(B, N)`` per row, or None for every id ``0 .. n_items``, padding
included) as the next item after each left-padded history ``seq`` (0 = padding).

- :class:`Popularity`: an item's count in the training sequences (Kang & McAuley 2018, §IV-B,
  "PopRec").
- :class:`CoOccurrence`: item-to-item transitions, ``C[i, j]`` = how often ``j`` came right
  after ``i`` in a training sequence, a first-order Markov chain's counts (the "MC" side of
  Kang & McAuley 2018, §II-B).
- :class:`GRURec`: a GRU4Rec-style recurrent model (Hidasi et al. 2016, "Session-based
  Recommendations with Recurrent Neural Networks"): item embedding -> GRU -> dot product with
  the same item embedding; trained with SASRec's loss (:meth:`NextItemModel.loss`), so one
  training loop serves both (GRU4Rec's own losses are ranking losses, BPR and TOP1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnkit.apps.recommendation.model import NextItemModel
from attnkit.config import Checked, bounded


def _select(scores: Tensor, items: Tensor | None) -> Tensor:
    """Columns ``items`` of ``scores (B, V+1)``: ``(B, N)``."""
    if items is None:
        return scores
    if items.dim() == 1:
        return scores[:, items]  # (B, N)
    return scores.gather(1, items)  # (B, N)


def _item_counts(sequences: Iterable[Sequence[int]], n_items: int) -> Tensor:
    counts = torch.zeros(n_items + 1, dtype=torch.float64)
    for seq in sequences:
        counts += torch.bincount(torch.as_tensor(seq, dtype=torch.long), minlength=n_items + 1)
    counts[0] = 0  # padding is never an item
    return counts


class Popularity:
    """Score ``j`` = the number of times ``j`` occurs in the training sequences, the same for
    every user. ``fit(sequences, n_items)``: each sequence a user's items in time order."""

    def __init__(self) -> None:
        self.counts: Tensor | None = None  # (V+1,), float64

    def fit(self, sequences: Iterable[Sequence[int]], n_items: int) -> Popularity:
        self.counts = _item_counts(sequences, n_items)
        return self

    def predict(self, seq: Tensor, items: Tensor | None = None) -> Tensor:
        """``(B, N)``; ``seq (B, L)`` only gives the batch size."""
        if self.counts is None:
            raise ValueError("Popularity is not fitted: call fit(sequences, n_items) first")
        scores = self.counts.to(seq.device).expand(seq.size(0), -1)  # (B, V+1)
        return _select(scores, items)


class CoOccurrence:
    """Item-to-item transitions. The rule: with ``C[i, j]`` the number of times item ``j``
    came immediately after item ``i`` in a training sequence, a history ``s_1 .. s_n`` scores

        ``score(j) = sum_{k=0}^{w-1} C[s_{n-k}, j]  (+ pop(j) / (total + 1) with backoff)``

    over its last ``w = window`` real items (an item twice among them counts twice). With
    ``backoff`` the popularity share (``pop(j)``: training count, ``total``: all counts), below
    1, breaks ties among items with equal transition counts, and never outranks one
    transition more. ``C`` is a sparse ``(V+1, V+1)`` matrix (Games: 23,716² dense would be
    2.2 GB)."""

    def __init__(self, window: int = 1, backoff: bool = True) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window, self.backoff = window, backoff
        self.transitions: Tensor | None = None  # sparse C^T (V+1, V+1), float64
        self.prior: Tensor | None = None  # (V+1,) popularity share, in [0, 1)

    def fit(self, sequences: Iterable[Sequence[int]], n_items: int) -> CoOccurrence:
        sequences = [list(s) for s in sequences]
        pairs = [(a, b) for s in sequences for a, b in pairwise(s) if a and b]  # (i, j): j after i
        index = torch.tensor(pairs, dtype=torch.long).reshape(-1, 2).T  # (2, P)
        ones = torch.ones(index.size(1), dtype=torch.float64)
        size = (n_items + 1, n_items + 1)
        # stored transposed, C^T, for a sparse-by-dense product in predict
        self.transitions = torch.sparse_coo_tensor(
            index.flip(0), ones, size, check_invariants=True
        ).coalesce()
        counts = _item_counts(sequences, n_items)
        self.prior = counts / (counts.sum() + 1)  # each below 1, summing below 1
        return self

    def predict(self, seq: Tensor, items: Tensor | None = None) -> Tensor:
        """``(B, N)`` by the rule in the class docstring."""
        if self.transitions is None or self.prior is None:
            raise ValueError("CoOccurrence is not fitted: call fit(sequences, n_items) first")
        last = seq[:, -self.window :].cpu()  # (B, w): the most recent items, 0 = none
        rows = torch.arange(seq.size(0)).unsqueeze(1).expand_as(last)  # (B, w)
        history = torch.zeros(seq.size(0), self.prior.numel(), dtype=torch.float64)  # (B, V+1)
        history.index_put_((rows, last), torch.ones(last.shape, dtype=torch.float64), True)
        history[:, 0] = 0  # padding is no item (row 0 of C is empty in any case)
        scores = torch.sparse.mm(self.transitions, history.T).T  # (B, V+1) = H C
        if self.backoff:
            scores = scores + self.prior  # (B, V+1)
        return _select(scores.to(seq.device), items.cpu() if items is not None else None)


@dataclass
class GRURecConfig(Checked):
    """The GRU baseline's shape; widths as SASRec's Games settings, for a like comparison."""

    d_model: int = bounded(50, ge=1)  # item embedding and GRU state width
    layers: int = bounded(1, ge=1)  # stacked GRU layers (GRU4Rec: 1)
    dropout: float = bounded(0.5, ge=0, lt=1)  # on the embeddings and the GRU's output


class GRURec(NextItemModel):
    """GRU4Rec-style next-item model over items ``1 .. n_items`` (0 = padding):
    ``h_t = GRU(dropout(M_{s_t}), h_{t-1})``, ``r_{i,t} = dropout(h_t) M_i^T``, the item table
    ``M`` shared by input and output, as SASRec's.

    Histories are left-padded; the GRU starts at the first real item (each row is shifted to
    the left, packed, run, and shifted back), so padding never changes a real position's
    output. Padding slots' outputs are zero. Zeros inside a history are not allowed."""

    def __init__(self, cfg: GRURecConfig, n_items: int) -> None:
        super().__init__()
        self.config, self.n_items = cfg, n_items
        self.item_embedding = nn.Embedding(n_items + 1, cfg.d_model, padding_idx=0)  # M
        nn.init.xavier_uniform_(self.item_embedding.weight)
        with torch.no_grad():
            self.item_embedding.weight[0].zero_()
        self.gru = nn.GRU(cfg.d_model, cfg.d_model, cfg.layers, batch_first=True)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, seq: Tensor) -> Tensor:
        """``seq (B, L)`` left-padded -> ``hidden (B, L, d)``; position ``t`` predicts
        ``t + 1``."""
        real = seq != 0  # (B, L)
        if bool((real[:, :-1] & ~real[:, 1:]).any()):
            raise ValueError("GRURec takes left-padded histories: a 0 follows an item")
        b, length = seq.shape
        lengths = real.sum(1)  # (B,)
        pads = length - lengths  # (B,)
        steps = torch.arange(length, device=seq.device)  # (L,)
        to_left = (steps + pads.unsqueeze(1)) % length  # (B, L): left-aligned slot -> column
        x = self.dropout(self.item_embedding(seq.gather(1, to_left)))  # (B, L, d), left-aligned
        packed = pack_padded_sequence(
            x, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False
        )
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=length)  # (B, L, d)
        back = (steps - pads.unsqueeze(1)) % length  # (B, L): column -> left-aligned slot
        out = out.gather(1, back.unsqueeze(-1).expand(b, length, out.size(-1)))  # (B, L, d)
        return self.dropout(out) * real.unsqueeze(-1)  # zero at padding
