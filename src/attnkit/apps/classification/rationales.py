"""A generated sentiment data set whose rationales are known, to test explanations against truth.

Why: on real data nobody knows which words *really* decided a label, so "attention points at
the right words" cannot be measured. Here every sentence is built so that the label is a
function of a few marked words, as in the synthetic benchmarks used to test attention and
saliency (e.g. the "rationale" annotations of DeYoung et al. 2020, ERASER; Jain & Wallace 2019
discuss why such ground truth is needed):

- **cue words** carry the sentiment: ``great``, ``superb`` ... (positive), ``awful``, ``dull``
  ... (negative);
- **negation** directly before a cue flips it: ``not great`` is negative;
- **distractors** look salient but carry nothing: intensifiers (``really``, ``truly``), and
  negators placed before *neutral* words (``not long``), drawn independently of the label;
- the rest is neutral filler (``the film was ...``).

An example's label is ``polarity(cue) XOR negated``; all cue phrases in one sentence agree.
:attr:`LabelledText.rationale` holds the word positions (indices into ``text.split()``) of every
cue and of the negator that flips it: exactly the words the label is computed from. Generation
is deterministic: each split draws from ``random.Random(f"attnkit-rationales/{seed}/{split}")``.
"""

from __future__ import annotations

import random

from attnkit.apps.classification.data import LabelledText

__all__ = ["NEGATORS", "NEGATIVE", "POSITIVE", "generate_rationales", "label_of"]

POSITIVE = ("good", "great", "excellent", "wonderful", "superb", "brilliant", "charming", "lovely")
NEGATIVE = ("bad", "awful", "terrible", "boring", "dull", "poor", "dreadful", "tedious")
NEGATORS = ("not", "never")
INTENSIFIERS = ("really", "truly", "very", "quite", "surprisingly", "rather")
NEUTRAL_ADJ = ("long", "short", "new", "old", "french", "quiet", "recent", "familiar")
SUBJECTS = (
    "the film",
    "the movie",
    "the plot",
    "the acting",
    "the script",
    "the ending",
    "the cast",
    "the story",
    "this picture",
    "the score",
)
FILLER = (
    "and",
    "then",
    "overall",
    "in the end",
    "for most of it",
    "at times",
    "as a whole",
    "from start to finish",
    "i think",
    "by the way",
)

SPLIT_SIZES = {"train": 4000, "dev": 500, "test": 500}


def label_of(words: list[str], rationale: tuple[int, ...]) -> int:
    """The label implied by the rationale words alone: 1 (positive) or 0 (negative)."""
    labels = set()
    for i in rationale:
        if words[i] in POSITIVE or words[i] in NEGATIVE:
            flipped = i > 0 and words[i - 1] in NEGATORS and (i - 1) in rationale
            labels.add(int((words[i] in POSITIVE) != flipped))
    if len(labels) != 1:
        raise ValueError(f"rationale {rationale} of {' '.join(words)!r} does not fix one label")
    return labels.pop()


def _clause(rng: random.Random, words: list[str], rationale: list[int], cue: str, negate: bool):
    """Append ``SUBJECT was [INTENSIFIER] [not] CUE`` and record the rationale positions."""
    words += rng.choice(SUBJECTS).split() + [rng.choice(("was", "is", "seemed", "felt"))]
    if rng.random() < 0.35:
        words.append(rng.choice(INTENSIFIERS))  # distractor
    if negate:
        rationale.append(len(words))
        words.append(rng.choice(NEGATORS))
    rationale.append(len(words))
    words.append(cue)


def _distractor_clause(rng: random.Random, words: list[str]) -> None:
    """A clause about a neutral property, often negated: salient-looking, label-free."""
    words += rng.choice(SUBJECTS).split() + ["was"]
    if rng.random() < 0.5:
        words.append(rng.choice(NEGATORS))
    words.append(rng.choice(NEUTRAL_ADJ))


def _example(rng: random.Random) -> LabelledText:
    label = rng.randrange(2)
    words: list[str] = []
    rationale: list[int] = []
    n_cues = 1 if rng.random() < 0.7 else 2
    clauses = ["cue"] * n_cues + ["distractor"] * rng.choice((0, 1, 1, 2))
    rng.shuffle(clauses)
    for k, kind in enumerate(clauses):
        if k:
            words += rng.choice(FILLER).split()
        if kind == "distractor":
            _distractor_clause(rng, words)
            continue
        negate = rng.random() < 0.35
        positive = bool(label) != negate
        _clause(rng, words, rationale, rng.choice(POSITIVE if positive else NEGATIVE), negate)
    assert label_of(words, tuple(rationale)) == label
    return LabelledText(" ".join(words), label, tuple(rationale))


def generate_rationales(split: str, n: int | None = None, seed: int = 0) -> list[LabelledText]:
    """``n`` examples of ``split`` (``train``/``dev``/``test``; default sizes in
    :data:`SPLIT_SIZES`), each with its true rationale; the same arguments give the same data."""
    if split not in SPLIT_SIZES:
        raise ValueError(f"split must be one of {tuple(SPLIT_SIZES)}, got {split!r}")
    rng = random.Random(f"attnkit-rationales/{seed}/{split}")
    return [_example(rng) for _ in range(SPLIT_SIZES[split] if n is None else n)]
