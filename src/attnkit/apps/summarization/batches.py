"""Papers as model inputs: the source's extended ids (an unknown source word gets ``V + k``,
See et al. 2017 §2.2), the summary's ids (with the pointer, an unknown summary word that the
source holds gets the source's extended id, so it can be copied; without it, ``<unk>``), and
padded batches of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attnkit.apps.summarization.data import (
    BOS,
    EOS,
    PAD,
    Paper,
    Vocabulary,
    encode_target,
    extend,
    tokenize,
)


@dataclass
class Example:
    """One paper ready for the model: ``source`` words (cut), their extended ids, the unknown
    words ``oovs`` (id ``V + k`` is ``oovs[k]``), and the first summary's ids, BOS and EOS
    around them (empty when the paper has no summary to learn)."""

    paper_id: str
    source: list[str]
    source_ids: list[int]
    oovs: list[str]
    target_ids: list[int]


def make_example(
    paper: Paper, vocab: Vocabulary, max_source: int, max_target: int, copy: bool
) -> Example:
    """The paper's abstract cut to ``max_source`` words and its first summary to
    ``max_target``; ``copy`` decides whether summary words outside the vocabulary keep the
    source's extended ids."""
    source = tokenize(paper.abstract)[:max_source]
    ids, oovs = extend(source, vocab)
    summary = tokenize(paper.targets[0])[:max_target] if paper.targets else []
    target = encode_target(summary, vocab, oovs if copy else [])
    return Example(paper.paper_id, source, ids, oovs, [BOS, *target, EOS])


@dataclass
class Batch:
    """``src (B, S)`` extended ids with ``src_mask (B, S)``, ``tgt_in (B, T)`` (BOS ...),
    ``tgt_out (B, T)`` (... EOS), both padded with ``<pad>``; ``units``: summary words (EOS too)."""

    src: torch.Tensor
    src_mask: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    units: int
    epoch: int = 1  # the training epoch it belongs to (the coverage loss may start later)


def pad(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    """``(B, longest)`` of ``rows``, padded on the right with ``<pad>`` (0)."""
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def source_batch(examples: Sequence[Example]) -> tuple[torch.Tensor, torch.Tensor]:
    """``src (B, S)`` and ``src_mask (B, S)`` of the examples' sources."""
    src = pad([e.source_ids for e in examples])  # (B, S)
    return src, src != PAD


def collate(examples: Sequence[Example]) -> Batch:
    """A padded batch of examples for teacher forcing."""
    src, src_mask = source_batch(examples)
    targets = pad([e.target_ids for e in examples])  # (B, T + 1)
    units = sum(len(e.target_ids) - 1 for e in examples)
    return Batch(src, src_mask, targets[:, :-1], targets[:, 1:], units)
