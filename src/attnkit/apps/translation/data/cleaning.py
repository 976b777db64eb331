"""Cleaning a parallel corpus: pairs with an empty side dropped everywhere, over-long pairs
only from the training split, every drop counted and logged."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import replace

from attnkit.apps.translation.data.corpora import DropCounts, Pair, ParallelCorpus

log = logging.getLogger(__name__)


def whitespace_length(text: str) -> int:
    """Number of whitespace-separated tokens (the default length for :func:`clean_pairs`)."""
    return len(text.split())


def clean_pairs(
    pairs: Iterable[Pair],
    *,
    max_len: int | None = None,
    length_fn: Callable[[str], int] = whitespace_length,
    where: str = "",
) -> tuple[list[Pair], DropCounts]:
    """Drop pairs with an empty side, and pairs with a side longer than ``max_len``.

    Length is ``length_fn(side)``: whitespace tokens by default, or pass e.g.
    ``lambda s: len(tokenizer.encode_src([s])[0])`` to count subwords. The counts are logged
    (``INFO``, or ``WARNING`` when anything was dropped) and returned.
    """
    kept, empty, too_long = [], 0, 0
    for pair in pairs:
        if not pair.src or not pair.tgt:
            empty += 1
        elif max_len is not None and max(length_fn(pair.src), length_fn(pair.tgt)) > max_len:
            too_long += 1
        else:
            kept.append(pair)
    counts = DropCounts(len(kept), empty, too_long)
    level = logging.WARNING if empty or too_long else logging.INFO
    limit = f" longer than {max_len} tokens" if max_len is not None else ""
    log.log(
        level,
        "%s: kept %d pairs, dropped %d empty and %d%s",
        where or "pairs",
        len(kept),
        empty,
        too_long,
        limit or " too long",
    )
    return kept, counts


def clean_corpus(
    corpus: ParallelCorpus,
    *,
    max_len: int | None = None,
    length_fn: Callable[[str], int] = whitespace_length,
    length_splits: tuple[str, ...] = ("train",),
) -> ParallelCorpus:
    """Clean every split: empty pairs everywhere, over-long pairs only in ``length_splits``.

    Validation and test sets keep their long sentences by default: dropping them would flatter
    the scores. The counts land in the returned corpus' ``dropped`` dict.
    """
    splits, dropped = {}, dict(corpus.dropped)
    for split, pairs in corpus.splits.items():
        limit = max_len if split in length_splits else None
        splits[split], dropped[split] = clean_pairs(
            pairs, max_len=limit, length_fn=length_fn, where=f"{corpus.name}/{split}"
        )
    return replace(corpus, splits=splits, dropped=dropped)
