"""The grammar of the generated corpus (:mod:`attnkit.apps.translation.data.generated`): clauses,
noun phrases and connectors, each English word with its German counterpart, and German word
order (the topological model: verb-second, verb-final, split perfect)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from num2words import num2words

from attnkit.apps.translation.data.generated_lexicon import (
    ADJECTIVES,
    ADVERBS,
    ANIMATE,
    ARTICLES,
    COLOURS,
    CONNECTORS,
    INTRANSITIVE,
    KINDS,
    NOUNS,
    PREPOSITIONS,
    SAYING,
    SIZES,
    THAT,
    TRANSITIVE,
)


@dataclass(frozen=True)
class Word:
    """A word being generated. An English word has a fresh ``key``; a German word lists the keys
    of the English words it translates (``sure``) and of those it may stand for (``possible``)."""

    text: str
    key: int = -1
    sure: tuple[int, ...] = ()
    possible: tuple[int, ...] = ()


def _de(text: str, *sure: Word, possible: tuple[Word, ...] = ()) -> Word:
    return Word(text, sure=tuple(w.key for w in sure), possible=tuple(w.key for w in possible))


@cache
def _number(n: int) -> tuple[tuple[str, ...], str]:
    """English words (num2words, "forty-five" as one token) and the German word for ``n``."""
    return tuple(num2words(n, lang="en").replace(",", "").split()), num2words(n, lang="de")


class _Clause:
    """One clause: English words, and German fields that :meth:`german` orders.

    German clause fields (topological model): subject, finite verb, middle field, right bracket
    (a participle). Main order: S V M R; verb-final: S M R V; after an adverb: V S M R.
    """

    __slots__ = ("en", "subj", "verb", "middle", "right", "saying")

    def __init__(self, en, subj, verb, middle=(), right=(), saying=False):
        self.en, self.subj, self.verb = en, subj, verb
        self.middle, self.right, self.saying = list(middle), list(right), saying

    def german(self, order: str) -> list[Word]:
        if order == "sub":
            return [*self.subj, *self.middle, *self.right, self.verb]
        if order == "inverted":
            return [self.verb, *self.subj, *self.middle, *self.right]
        return [*self.subj, self.verb, *self.middle, *self.right]


class Grammar:
    def __init__(self, rng: random.Random, max_number: int):
        self.rng, self.max_number, self.keys = rng, max_number, 0

    def en(self, text: str) -> Word:
        """A new English word with its own key."""
        self.keys += 1
        return Word(text, key=self.keys)

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

    def noun_phrase(self, case: str, animate: bool = False) -> tuple[list[Word], list[Word]]:
        """ "the big red dog" -> "der große rote Hund" (weak endings after the article)."""
        en_sg, _, de_sg, _, gender, _ = self.rng.choice(ANIMATE if animate else NOUNS)
        adjs = self.adjectives()
        ending = "e" if case == "nom" or (case == "acc" and gender != "m") else "en"
        the, en_adjs, noun = self.en("the"), [self.en(a[0]) for a in adjs], self.en(en_sg)
        de_adjs = [_de(a[1] + ending, e) for a, e in zip(adjs, en_adjs, strict=True)]
        return [the, *en_adjs, noun], [_de(ARTICLES[case][gender], the), *de_adjs, _de(de_sg, noun)]

    def object_phrase(self) -> tuple[list[Word], list[Word]]:
        """A singular accusative NP, or "three red apples" -> "drei rote Äpfel" (strong -e)."""
        if self.rng.random() < 0.5:
            return self.noun_phrase("acc")
        n = self.number()
        _, en_pl, _, de_pl, _, _ = self.rng.choice(NOUNS)
        adjs = self.adjectives()
        en_words, de_num = _number(n)
        en_num, en_adjs = [self.en(w) for w in en_words], [self.en(a[0]) for a in adjs]
        noun = self.en(en_pl)
        de_adjs = [_de(a[1] + "e", e) for a, e in zip(adjs, en_adjs, strict=True)]
        return [*en_num, *en_adjs, noun], [_de(de_num, *en_num), *de_adjs, _de(de_pl, noun)]

    def shortest(self, noun, verb) -> _Clause:
        """ "the dog sleeps" -> "der Hund schläft"."""
        the, en_noun, en_verb = self.en("the"), self.en(noun[0]), self.en(verb[0])
        de_s = [_de(ARTICLES["nom"][noun[4]], the), _de(noun[2], en_noun)]
        return _Clause([the, en_noun, en_verb], de_s, _de(verb[1], en_verb))

    def clause(self) -> _Clause:
        r = self.rng
        kind = r.choice(KINDS)
        if kind == "cost":
            en_s, de_s = self.noun_phrase("nom")
            en_words, de_num = _number(self.number())
            costs, en_num, euros = (
                self.en("costs"),
                [self.en(w) for w in en_words],
                self.en("euros"),
            )
            de_m = [_de(de_num, *en_num), _de("Euro", euros)]
            return _Clause([*en_s, costs, *en_num, euros], de_s, _de("kostet", costs), de_m)
        en_s, de_s = self.noun_phrase("nom", animate=True)
        if kind == "intr":
            en_v, de_v = r.choice(INTRANSITIVE)
            verb, en_pp, de_pp = self.en(en_v), [], []
            if r.random() < 0.5:
                (en_p, de_p), (en_np, de_np) = r.choice(PREPOSITIONS), self.noun_phrase("dat")
                head, *rest = [self.en(w) for w in en_p.split()]  # "next to": "to" is possible
                en_pp, de_pp = (
                    [head, *rest, *en_np],
                    [_de(de_p, head, possible=tuple(rest)), *de_np],
                )
            return _Clause([*en_s, verb, *en_pp], de_s, _de(de_v, verb), de_pp)
        if kind == "say":
            en_v, de_v = r.choice(SAYING)
            verb = self.en(en_v)
            return _Clause([*en_s, verb], de_s, _de(de_v, verb), saying=True)
        en_v, de_v, en_part, de_part = r.choice(TRANSITIVE)
        en_o, de_o = self.object_phrase()
        if kind == "pres":
            verb = self.en(en_v)
            return _Clause([*en_s, verb, *en_o], de_s, _de(de_v, verb), de_o)
        has, part = self.en("has"), self.en(en_part)  # a split verb: each half may go with both
        right = [_de(de_part, part, possible=(has,))]
        return _Clause(
            [*en_s, has, part, *en_o], de_s, _de("hat", has, possible=(part,)), de_o, right
        )

    def connector(self, conn: tuple[str, str, str]) -> tuple[list[Word], list[Word]]:
        """ "and" -> "und"; ", but" -> ", aber"; "because" -> ", weil" (the comma possible)."""
        word = self.en(conn[0])
        if conn[0] == "but":
            comma = self.en(",")
            return [comma, word], [_de(",", comma), _de("aber", word)]
        if conn[1].startswith(", "):
            return [word], [_de(",", possible=(word,)), _de(conn[1][2:], word)]
        return [word], [_de(conn[1], word)]

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

    def sentence(self, target: int) -> tuple[list[Word], list[Word]]:
        """Chain clauses until the English side would pass ``target`` words."""
        r, en, de = self.rng, [], []
        adverb = ADVERBS[r.randrange(len(ADVERBS))] if r.random() < 0.2 and target >= 4 else None
        first = self.fitting_clause(target - (adverb is not None))
        if first is None:  # the shortest clause, "the dog sleeps"
            first = self.shortest(r.choice(ANIMATE), r.choice(INTRANSITIVE))
        if adverb is not None:
            word = self.en(adverb[0])
            en += [word, *first.en]
            de += [_de(adverb[1], word), *first.german("inverted")]
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
                    clause = self.shortest(r.choice(ANIMATE), r.choice(INTRANSITIVE))
                else:
                    break
            order = order if conn[2] == "same" else conn[2]
            en_conn, de_conn = self.connector(conn)
            en += [*en_conn, *clause.en]
            de += [*de_conn, *clause.german(order)]
            previous = clause
        stop = self.en(".")
        return [*en, stop], [*de, _de(".", stop)]
