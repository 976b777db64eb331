"""The generated data set's known truths: labels follow from the marked rationale alone."""

from __future__ import annotations

from attnkit.apps.classification.rationales import (
    INTENSIFIERS,
    NEGATIVE,
    NEGATORS,
    POSITIVE,
    generate_rationales,
    label_of,
)


def test_generation_is_deterministic_per_seed_and_split():
    a = generate_rationales("train", 50, seed=1)
    assert a == generate_rationales("train", 50, seed=1)
    assert a != generate_rationales("train", 50, seed=2)
    assert a != generate_rationales("dev", 50, seed=1)


def test_labels_follow_from_the_rationale_and_negation_flips():
    data = generate_rationales("train", 2000)
    negated = 0
    for e in data:
        words = e.text.split()
        assert e.rationale and label_of(words, e.rationale) == e.label
        for i in e.rationale:
            assert words[i] in POSITIVE + NEGATIVE + NEGATORS
            if words[i] in NEGATORS:  # a negator in the rationale sits right before its cue
                negated += 1
                assert words[i + 1] in POSITIVE + NEGATIVE and i + 1 in e.rationale
                assert e.label == int(words[i + 1] in NEGATIVE)
        # every cue word outside the rationale would be a second, unrecorded cause: none exist
        cues = {i for i, w in enumerate(words) if w in POSITIVE + NEGATIVE}
        assert cues <= set(e.rationale)
    assert 0.2 < negated / len(data) < 0.6  # negation is common enough to matter
    assert 0.45 < sum(e.label for e in data) / len(data) < 0.55


def test_distractors_carry_no_label():
    data = generate_rationales("train", 3000)
    for distractor in (*INTENSIFIERS, *NEGATORS):
        with_it = [e.label for e in data if distractor in e.text.split()]
        assert len(with_it) > 100
        assert abs(sum(with_it) / len(with_it) - 0.5) < 0.1, distractor
