"""Alignment-guided training: one cross-attention head learns given word alignments.

Garg et al. 2019 ("Jointly learning to align and translate with Transformer models", §4.2,
eq. 4) add to the translation loss the cross-entropy between one attention head's weights
``A`` and an alignment distribution ``G`` read from given links (a statistical aligner's, or
the model's own):

    L_a = - sum_i sum_j G_ij log A_ij,     L = L_translation + lambda * L_a     (lambda = 0.05)

``G_i`` is target word ``i``'s links spread evenly over its linked source words; target words
with no link add nothing. The links are between **words**: a training pair's words are
:func:`split_words` of its text (words and punctuation marks apart, as Europarl-style gold),
and they are mapped to the subword pieces the model reads by character overlap (as
:mod:`attnkit.apps.translation.align.forced`): a target piece takes its word's row, and a source
word's share is spread over its pieces. Row ``k`` of the head is the decoder step that emits
target piece ``k``.

Shapes: per pair ``G`` is ``(T_pieces, S_pieces)``; a batch pads to ``(B, T, S)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torch import Tensor

from attnkit.apps.translation.align.forced import cross_attention, word_pooling
from attnkit.errors import DataError
from attnkit.interpret.alignments import Alignment, read_pharaoh

WORD = re.compile(r"\w+(?:[-'’.]\w+)*|[^\w\s]")


def split_words(text: str) -> list[tuple[int, int]]:
    """UTF-8 byte spans of the words of ``text``: runs of letters and digits (joined by inner
    hyphens, apostrophes and full stops: "forty-five", "don't", "3.5") and single punctuation
    marks."""
    spans = []
    for match in WORD.finditer(text):
        start = len(text[: match.start()].encode("utf-8"))
        spans.append((start, start + len(match.group().encode("utf-8"))))
    return spans


def tokenized(text: str) -> str:
    """The words of ``text`` joined by spaces: the tokens an alignment file indexes."""
    return " ".join(m.group() for m in WORD.finditer(text))


def piece_target(
    alignment: Alignment, src_pool: Tensor, tgt_pool: Tensor, where: str = "<pair>"
) -> Tensor:
    """``G (T_pieces, S_pieces)`` float32 from word links ``(source word, target word)`` and the
    pooling matrices of :func:`~attnkit.apps.translation.align.forced.word_pooling`
    (``(n_pieces, n_words)``, rows summing to 1). Rows of unaligned target pieces are 0."""
    n_src, n_tgt = src_pool.shape[1], tgt_pool.shape[1]
    words = torch.zeros(n_tgt, n_src, dtype=torch.float64)  # (T_words, S_words)
    for i, j in alignment.links:
        if i >= n_src or j >= n_tgt:
            raise DataError(
                f"{where}: link {i}-{j} (0-based) is outside a pair of {n_src} source and "
                f"{n_tgt} target words"
            )
        words[j, i] = 1.0
    words = words / words.sum(1, keepdim=True).clamp(min=1.0)  # each linked row sums to 1
    src_share = src_pool / src_pool.sum(0, keepdim=True).clamp(min=1e-12)  # word -> its pieces
    target = tgt_pool @ words @ src_share.T  # (T_pieces, S_pieces)
    return target.float()


def _pools(processor, text: str, where: str) -> tuple[list[int], Tensor]:
    proto = processor.encode(text, return_type="proto")
    spans = split_words(text)
    if not spans:
        raise DataError(f"{where}: the sentence has no words")
    return [p.id for p in proto.pieces], word_pooling(proto.pieces, spans, where)


def guidance_targets(
    tokenizer,
    pairs: Sequence[tuple[str, str]],
    path,
    examples: Sequence,
    one_based: bool = False,
) -> dict[int, Tensor]:
    """``G`` per training example index, read from the Pharaoh file ``path`` (one line per
    pair of ``pairs``, links over :func:`split_words`). ``examples`` are the encoded pairs the
    model trains on (their ``index`` into ``pairs``): their pieces must be the ones mapped here.
    Errors name the file and line."""
    alignments = read_pharaoh(path, one_based)
    if len(alignments) != len(pairs):
        raise DataError(
            f"{path}: {len(alignments)} lines of alignments for {len(pairs)} training pairs "
            "(after empty pairs are dropped); one line per training pair, in order"
        )
    targets = {}
    for example in examples:
        n = example.index
        where = f"{path}, line {n + 1}"
        src_ids, src_pool = _pools(tokenizer.src, pairs[n][0], where + " (source)")
        tgt_ids, tgt_pool = _pools(tokenizer.tgt, pairs[n][1], where + " (target)")
        if src_ids != list(example.src) or tgt_ids != list(example.tgt):
            raise DataError(f"{where}: the pair encodes to other pieces than the model reads")
        targets[n] = piece_target(alignments[n], src_pool, tgt_pool, where)
    return targets


def batch_targets(targets: Sequence[Tensor], t: int, s: int) -> Tensor:
    """Pad per-pair ``G`` into ``(B, t, s)`` (``t`` decoder steps, ``s`` source pieces)."""
    out = torch.zeros(len(targets), t, s)
    for b, g in enumerate(targets):
        out[b, : g.shape[0], : g.shape[1]] = g
    return out


def head_weights(attention: dict[str, Tensor], layer: int, head: int) -> Tensor:
    """One head's cross-attention ``(B, T, S)``: ``"layer{l}.cross"`` of a Transformer
    (``layer`` negative from the end) or a recurrent model's ``"cross"`` (one head)."""
    return cross_attention(attention, layer, head)  # the same layer naming as forced decoding


def guided_alignment_loss(weights: Tensor, target: Tensor, eps: float = 1e-9) -> Tensor:
    """``- sum G log A`` over the batch (Garg et al. 2019 eq. 4, summed over target tokens):
    ``weights`` and ``target`` are ``(B, T, S)``; zero rows of ``target`` add nothing."""
    return -(target * weights.float().clamp(min=eps).log()).sum()
