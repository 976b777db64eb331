"""Longer training examples from short pairs: consecutive sentence pairs joined into one.

Tatoeba and Multi30k sentences are short (median 6 and 11 English words), but the RWTH
German-English gold (Vilar, Popović & Ney 2006) has a median of 19, and attention learnt on
short text does not align long sentences (docs/alignment.md). Joining 2-4 pairs into one example, as
document-level translation builds its training examples from consecutive sentences (Tiedemann
& Scherrer 2017, "2+2"), gives training lengths that cover the gold's while every word keeps its
translation: the source sentences are joined by single spaces in their order, and the target
sentences likewise in the same order, so sentence ``k`` of the source is still translated by
sentence ``k`` of the target and the pair stays parallel.

The pairs are first put in an order shuffled by ``random.Random(seed)``: the Tatoeba training
split is in file order, sorted by length, with a sentence's several translations side by side,
so its neighbours would be near-copies ("Go." "Go." "Go."). Walking that order, each example
takes the next ``k`` pairs, ``k`` drawn uniformly from ``[low, high]`` by the same generator;
the last takes what is left (possibly fewer than ``low``). Every pair is used exactly once, and
the result is a pure function of the pairs, the sizes and the seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from attnkit.apps.translation.data.corpora import Pair


def concatenate_pairs(pairs: Sequence[Pair], sizes: tuple[int, int], seed: int = 0) -> list[Pair]:
    """``pairs`` grouped into examples of ``sizes = (low, high)`` sentences each (module
    docstring): ``Pair(" ".join(sources), " ".join(targets))`` per group, in the shuffled order.
    ``(1, 1)`` shuffles and keeps every pair as it is."""
    low, high = sizes
    if not 1 <= low <= high:
        raise ValueError(f"concatenation sizes must satisfy 1 <= low <= high, got {list(sizes)}")
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    out, start = [], 0
    while start < len(order):
        group = [pairs[i] for i in order[start : start + rng.randint(low, high)]]
        out.append(Pair(" ".join(p.src for p in group), " ".join(p.tgt for p in group)))
        start += len(group)
    return out
