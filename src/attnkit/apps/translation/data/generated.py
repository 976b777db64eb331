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
"""

from __future__ import annotations

import random
from functools import cache

from num2words import num2words

from attnkit.apps.translation.data.corpora import Pair, ParallelCorpus, write_corpus

__all__ = ["DEFAULT_TRAIN", "generate_corpus", "generate_pairs", "write_corpus"]

DEFAULT_TRAIN = 20_000

SIZES = [("big", "groß"), ("small", "klein"), ("old", "alt"), ("new", "neu")]
COLOURS = [
    ("red", "rot"), ("blue", "blau"), ("green", "grün"), ("yellow", "gelb"), ("black", "schwarz"),
    ("white", "weiß"),
]  # fmt: skip
ADJECTIVES = SIZES + COLOURS
# English singular, plural; German singular, plural, gender; animate (may sleep, see, say).
NOUNS = [
    ("dog", "dogs", "Hund", "Hunde", "m", True),
    ("cat", "cats", "Katze", "Katzen", "f", True),
    ("bird", "birds", "Vogel", "Vögel", "m", True),
    ("horse", "horses", "Pferd", "Pferde", "n", True),
    ("mouse", "mice", "Maus", "Mäuse", "f", True),
    ("fox", "foxes", "Fuchs", "Füchse", "m", True),
    ("house", "houses", "Haus", "Häuser", "n", False),
    ("car", "cars", "Auto", "Autos", "n", False),
    ("book", "books", "Buch", "Bücher", "n", False),
    ("table", "tables", "Tisch", "Tische", "m", False),
    ("lamp", "lamps", "Lampe", "Lampen", "f", False),
    ("apple", "apples", "Apfel", "Äpfel", "m", False),
    ("flower", "flowers", "Blume", "Blumen", "f", False),
    ("chair", "chairs", "Stuhl", "Stühle", "m", False),
    ("ball", "balls", "Ball", "Bälle", "m", False),
    ("cup", "cups", "Tasse", "Tassen", "f", False),
]
ANIMATE = [n for n in NOUNS if n[5]]
INTRANSITIVE = [
    ("sleeps", "schläft"), ("sings", "singt"), ("waits", "wartet"), ("laughs", "lacht"),
    ("dances", "tanzt"),
]  # fmt: skip
# present English, present German, English participle, German participle
TRANSITIVE = [
    ("sees", "sieht", "seen", "gesehen"), ("buys", "kauft", "bought", "gekauft"),
    ("finds", "findet", "found", "gefunden"), ("paints", "malt", "painted", "gemalt"),
    ("washes", "wäscht", "washed", "gewaschen"),
]  # fmt: skip
SAYING = [("says", "sagt"), ("thinks", "glaubt"), ("knows", "weiß")]
PREPOSITIONS = [("next to", "neben"), ("behind", "hinter"), ("under", "unter"), ("with", "mit")]
ADVERBS = [("today", "heute"), ("now", "jetzt")]
# English, German (with its comma), order of the clause that follows: "sub" = verb-final,
# "same" = the order of the clause before.
CONNECTORS = [
    ("and", "und", "same"), ("but", ", aber", "main"), ("because", ", weil", "sub"),
    ("although", ", obwohl", "sub"), ("while", ", während", "sub"),
]  # fmt: skip
THAT = ("that", ", dass", "sub")
ARTICLES = {
    "nom": {"m": "der", "f": "die", "n": "das"},
    "acc": {"m": "den", "f": "die", "n": "das"},
    "dat": {"m": "dem", "f": "der", "n": "dem"},
}
_KINDS = ("intr", "cost", "pres", "perf") * 3 + ("say",)  # clause kinds, weights 3:3:3:3:1
FINITE_VERBS = (
    {v[1] for v in INTRANSITIVE + SAYING} | {v[1] for v in TRANSITIVE} | {"hat", "kostet"}
)


@cache
def _number(n: int) -> tuple[list[str], str]:
    """English words (num2words, "forty-five" as one token) and the German word for ``n``."""
    return num2words(n, lang="en").replace(",", "").split(), num2words(n, lang="de")


class _Clause:
    """One clause: English words, and German fields that :meth:`german` orders.

    German clause fields (topological model): subject, finite verb, middle field, right bracket
    (a participle). Main order: S V M R; verb-final: S M R V; after an adverb: V S M R.
    """

    __slots__ = ("en", "subj", "verb", "middle", "right", "saying")

    def __init__(self, en, subj, verb, middle=(), right=(), saying=False):
        self.en, self.subj, self.verb = en, subj, verb
        self.middle, self.right, self.saying = list(middle), list(right), saying

    def german(self, order: str) -> list[str]:
        if order == "sub":
            return [*self.subj, *self.middle, *self.right, self.verb]
        if order == "inverted":
            return [self.verb, *self.subj, *self.middle, *self.right]
        return [*self.subj, self.verb, *self.middle, *self.right]


class _Grammar:
    def __init__(self, rng: random.Random, max_number: int):
        self.rng, self.max_number = rng, max_number

    def number(self) -> int:
        r = self.rng
        while True:
            if self.max_number < 100 or r.random() < 0.6:
                n = r.randint(2, min(99, self.max_number))
            else:
                n = r.randint(100, self.max_number)
            if n < 100 or n % 100 != 1:  # "hunderteins" is not used attributively
                return n

    def adjectives(self) -> list[tuple[str, str]]:
        """None (40%), one (40%) or "big red" (a size, then a colour; 20%)."""
        r = self.rng
        u = r.random()
        if u < 0.4:
            return []
        if u < 0.8:
            return [r.choice(ADJECTIVES)]
        return [r.choice(SIZES), r.choice(COLOURS)]

    def noun_phrase(self, case: str, animate: bool = False) -> tuple[list[str], list[str]]:
        """ "the big red dog" -> "der große rote Hund" (weak endings after the article)."""
        en_sg, _, de_sg, _, gender, _ = self.rng.choice(ANIMATE if animate else NOUNS)
        adjs = self.adjectives()
        ending = "e" if case == "nom" or (case == "acc" and gender != "m") else "en"
        de = [ARTICLES[case][gender], *(a[1] + ending for a in adjs), de_sg]
        return ["the", *(a[0] for a in adjs), en_sg], de

    def object_phrase(self) -> tuple[list[str], list[str]]:
        """A singular accusative NP, or "three red apples" -> "drei rote Äpfel" (strong -e)."""
        if self.rng.random() < 0.5:
            return self.noun_phrase("acc")
        n = self.number()
        _, en_pl, _, de_pl, _, _ = self.rng.choice(NOUNS)
        adjs = self.adjectives()
        en_num, de_num = _number(n)
        return [*en_num, *(a[0] for a in adjs), en_pl], [de_num, *(a[1] + "e" for a in adjs), de_pl]

    def clause(self) -> _Clause:
        r = self.rng
        kind = r.choice(_KINDS)
        if kind == "cost":
            en_s, de_s = self.noun_phrase("nom")
            en_num, de_num = _number(self.number())
            return _Clause([*en_s, "costs", *en_num, "euros"], de_s, "kostet", [de_num, "Euro"])
        en_s, de_s = self.noun_phrase("nom", animate=True)
        if kind == "intr":
            en_v, de_v = r.choice(INTRANSITIVE)
            en_pp, de_pp = [], []
            if r.random() < 0.5:
                (en_p, de_p), (en_np, de_np) = r.choice(PREPOSITIONS), self.noun_phrase("dat")
                en_pp, de_pp = [*en_p.split(), *en_np], [de_p, *de_np]
            return _Clause([*en_s, en_v, *en_pp], de_s, de_v, de_pp)
        if kind == "say":
            en_v, de_v = r.choice(SAYING)
            return _Clause([*en_s, en_v], de_s, de_v, saying=True)
        en_v, de_v, en_part, de_part = r.choice(TRANSITIVE)
        en_o, de_o = self.object_phrase()
        if kind == "pres":
            return _Clause([*en_s, en_v, *en_o], de_s, de_v, de_o)
        return _Clause([*en_s, "has", en_part, *en_o], de_s, "hat", de_o, [de_part])

    def fitting_clause(self, budget: int, tries: int = 8) -> _Clause | None:
        """A random clause of at most ``budget`` words (a saying clause leaves room for "that
        the dog sleeps"), or None."""
        if budget < 3:
            return None
        for _ in range(tries):
            c = self.clause()
            if len(c.en) + (4 if c.saying else 0) <= budget:
                return c
        return None

    def sentence(self, target: int) -> Pair:
        """Chain clauses until the English side would pass ``target`` words."""
        r, en, de = self.rng, [], []
        adverb = ADVERBS[r.randrange(len(ADVERBS))] if r.random() < 0.2 and target >= 4 else None
        first = self.fitting_clause(target - (adverb is not None))
        if first is None:  # the shortest clause, "the dog sleeps"
            noun, verb = r.choice(ANIMATE), r.choice(INTRANSITIVE)
            first = _Clause(["the", noun[0], verb[0]], [ARTICLES["nom"][noun[4]], noun[2]], verb[1])
        if adverb is not None:
            en += [adverb[0], *first.en]
            de += [adverb[1], *first.german("inverted")]
        else:
            en, de = list(first.en), first.german("main")
        order, previous = "main", first
        while True:
            if previous.saying:
                conn = THAT
            else:
                choices = (
                    CONNECTORS if order == "main" else [c for c in CONNECTORS if c[0] != "but"]
                )
                conn = r.choice(choices)
            clause = self.fitting_clause(target - len(en) - 1)
            if clause is None:
                if previous.saying:  # room was reserved, so this only happens by bad luck
                    noun, verb = r.choice(ANIMATE), r.choice(INTRANSITIVE)
                    de_s = [ARTICLES["nom"][noun[4]], noun[2]]
                    clause = _Clause(["the", noun[0], verb[0]], de_s, verb[1])
                else:
                    break
            order = order if conn[2] == "same" else conn[2]
            en += [conn[0], *clause.en] if conn[0] != "but" else [",", "but", *clause.en]
            de += [conn[1], *clause.german(order)]
            previous = clause
        return Pair(_finish(en), _finish(de))


def _finish(words: list[str]) -> str:
    text = " ".join(words).replace(" ,", ",")
    return text[0].upper() + text[1:] + "."


def generate_pairs(
    n: int,
    seed: int,
    *,
    split: str = "train",
    min_len: int = 3,
    max_len: int = 50,
    skew: float = 1.0,
    max_number: int = 999,
    exclude: set[str] | None = None,
) -> list[Pair]:
    """``n`` pairs; the target English length is ``min_len + (max_len - min_len + 1) * u**skew``
    words for ``u ~ U(0, 1)``: uniform for ``skew=1``, more short sentences for ``skew > 1``.
    Sentences stop at the last clause that fits, so a few fall short of their target.
    Numbers run from 2 to ``max_number`` (60% of them below 100); a lower ``max_number`` makes
    the task easier. Source sentences in ``exclude`` are skipped.
    """
    if not 3 <= min_len <= max_len:
        raise ValueError(f"need 3 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")
    if skew <= 0 or not 2 <= max_number <= 999:
        raise ValueError(f"need skew > 0 and 2 <= max_number <= 999, got {skew}, {max_number}")
    grammar = _Grammar(random.Random(f"attnkit-generated/{seed}/{split}"), max_number)
    exclude = exclude or set()
    pairs: list[Pair] = []
    for _ in range(50 * n + 1000):
        if len(pairs) == n:
            return pairs
        u = grammar.rng.random()
        target = min(max_len, min_len + int((max_len - min_len + 1) * u**skew))
        pair = grammar.sentence(target)
        if pair.src not in exclude:
            pairs.append(pair)
    raise ValueError(f"could only generate {len(pairs)} of {n} new pairs; widen the lengths")


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
    test = generate_pairs(n_test, seed, split="test", **kw)
    held = {p.src for p in test}
    valid = generate_pairs(n_valid, seed, split="valid", exclude=held, **kw)
    held |= {p.src for p in valid}
    train = generate_pairs(n_train, seed, split="train", exclude=held, **kw)
    splits = {"train": train, "valid": valid, "test": test}
    return ParallelCorpus(f"generated-s{seed}", splits, "en", "de")
