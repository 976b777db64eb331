"""The embedded default corpus: English -> German sentences the project generates itself.

Why generate: the demo must show the encoder-decoder bottleneck (Cho et al. 2014, "On the
Properties of Neural Machine Translation: Encoder-Decoder Approaches", Fig. 4; Bahdanau et al.
2015, Fig. 2) in minutes on a CPU, without downloads. The sentences chain clauses of a small
grammar, so lengths run from 3 to ``max_len`` (default 50) English words, and each clause holds
details (colours, nouns, numbers) that must be carried across, one by one, to the output.

The languages differ in order, so a model must look back, not just copy left to right:

- **verb-final subordinate clauses**: "because the red dog has seen three cats" ->
  "weil der rote Hund drei Katzen gesehen hat" (the finite verb moves to the end, past the object);
- **verb-second after an adverb**: "today the dog sleeps" -> "heute schläft der Hund";
- **split verbs** in the perfect: "has seen the cat" -> "hat die Katze gesehen";
- **numbers** from :mod:`num2words` (``lang="de"``): units before tens, "forty-five" ->
  "fünfundvierzig", written as one word as German spells it (subwords learn the pieces);
- agreement: articles and weak/strong adjective endings follow gender and case
  ("der rote Hund" / "den roten Hund" / "mit dem roten Hund" / "drei rote Hunde").

Coordination keeps the order of the clause before it ("weil A und B" makes B verb-final too), so
the German order is always determined by the English. Generation is deterministic: each split
draws from ``random.Random(f"attnkit-generated/{seed}/{split}")``; test sentences are generated
first, and valid and train skip any source sentence already held out.

Every pair also carries its **gold word alignment** (:class:`AlignedPair`; Och & Ney 2003's
sure and possible links), known by construction: each German word records the English words it
translates. Sure links join translations ("the" - "der", "forty-five" - "fünfundvierzig", all
words of "one hundred two" - "hundertzwei"); possible links join words with no counterpart of
their own to the word they go with: the German comma before "weil" / "dass" to the English
subordinator, "to" of "next to" to "neben", and the two halves of a split perfect ("has seen" -
"hat ... gesehen": "has" - "gesehen" and "seen" - "hat"). Words are tokens: punctuation is a
word of its own, and :func:`attnkit.apps.translation.align.forced.detokenize` of the tokens is the
sentence text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from attnkit.apps.translation.data.corpora import Pair, ParallelCorpus, write_corpus
from attnkit.apps.translation.data.generated_grammar import Grammar, Word
from attnkit.interpret.alignments import Alignment

__all__ = [
    "DEFAULT_TRAIN",
    "AlignedPair",
    "generate_aligned_corpus",
    "generate_aligned_pairs",
    "generate_corpus",
    "generate_pairs",
    "write_corpus",
]

DEFAULT_TRAIN = 20_000


@dataclass(frozen=True)
class AlignedPair:
    """A generated pair as tokens, with its gold links ``(English word, German word)``, 0-based.

    ``pair`` is the running text (English source, German target) a model is trained on."""

    en: tuple[str, ...]
    de: tuple[str, ...]
    alignment: Alignment

    @property
    def pair(self) -> Pair:
        return Pair(_text(self.en), _text(self.de))


def _aligned(en: list[Word], de: list[Word]) -> AlignedPair:
    """Tokens (the first capitalised) and links ``(English index, German index)``."""
    where = {w.key: i for i, w in enumerate(en)}
    sure = {(where[k], j) for j, w in enumerate(de) for k in w.sure}
    possible = {(where[k], j) for j, w in enumerate(de) for k in w.possible}
    return AlignedPair(_tokens(en), _tokens(de), Alignment(frozenset(sure), frozenset(possible)))


def _tokens(words: list[Word]) -> tuple[str, ...]:
    first = words[0].text
    return (first[0].upper() + first[1:], *(w.text for w in words[1:]))


def _text(tokens: tuple[str, ...]) -> str:
    """Running text: commas and the full stop join the word before."""
    return " ".join(tokens).replace(" ,", ",").removesuffix(" .") + "."


def generate_aligned_pairs(
    n: int,
    seed: int,
    *,
    split: str = "train",
    min_len: int = 3,
    max_len: int = 50,
    skew: float = 1.0,
    max_number: int = 999,
    exclude: set[str] | None = None,
) -> list[AlignedPair]:
    """``n`` pairs with their gold alignments; the target English length is
    ``min_len + (max_len - min_len + 1) * u**skew`` words for ``u ~ U(0, 1)``: uniform for
    ``skew=1``, more short sentences for ``skew > 1``. Sentences stop at the last clause that
    fits, so a few fall short of their target. Numbers run from 2 to ``max_number`` (60% of
    them below 100); a lower ``max_number`` makes the task easier. Source sentences (running
    text) in ``exclude`` are skipped.
    """
    if not 3 <= min_len <= max_len:
        raise ValueError(f"need 3 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")
    if skew <= 0 or not 2 <= max_number <= 999:
        raise ValueError(f"need skew > 0 and 2 <= max_number <= 999, got {skew}, {max_number}")
    grammar = Grammar(random.Random(f"attnkit-generated/{seed}/{split}"), max_number)
    exclude = exclude or set()
    pairs: list[AlignedPair] = []
    for _ in range(50 * n + 1000):
        if len(pairs) == n:
            return pairs
        u = grammar.rng.random()
        target = min(max_len, min_len + int((max_len - min_len + 1) * u**skew))
        aligned = _aligned(*grammar.sentence(target))
        if aligned.pair.src not in exclude:
            pairs.append(aligned)
    raise ValueError(f"could only generate {len(pairs)} of {n} new pairs; widen the lengths")


def generate_pairs(n: int, seed: int, **kw) -> list[Pair]:
    """The running-text pairs of :func:`generate_aligned_pairs` (same arguments)."""
    return [aligned.pair for aligned in generate_aligned_pairs(n, seed, **kw)]


def generate_aligned_corpus(
    n_train: int = DEFAULT_TRAIN,
    n_valid: int = 1000,
    n_test: int = 1000,
    seed: int = 0,
    **kw,
) -> dict[str, list[AlignedPair]]:
    """The splits of :func:`generate_corpus` with their gold alignments."""
    test = generate_aligned_pairs(n_test, seed, split="test", **kw)
    held = {p.pair.src for p in test}
    valid = generate_aligned_pairs(n_valid, seed, split="valid", exclude=held, **kw)
    held |= {p.pair.src for p in valid}
    train = generate_aligned_pairs(n_train, seed, split="train", exclude=held, **kw)
    return {"train": train, "valid": valid, "test": test}


def generate_corpus(
    n_train: int = DEFAULT_TRAIN,
    n_valid: int = 1000,
    n_test: int = 1000,
    seed: int = 0,
    *,
    min_len: int = 3,
    max_len: int = 50,
    skew: float = 1.0,
    max_number: int = 999,
) -> ParallelCorpus:
    """The default English -> German corpus; no source sentence is in two splits."""
    kw = dict(min_len=min_len, max_len=max_len, skew=skew, max_number=max_number)
    aligned = generate_aligned_corpus(n_train, n_valid, n_test, seed, **kw)
    splits = {name: [p.pair for p in pairs] for name, pairs in aligned.items()}
    return ParallelCorpus(f"generated-s{seed}", splits, "en", "de")
