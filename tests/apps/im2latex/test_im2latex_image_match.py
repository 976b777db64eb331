"""The image-match measure (image_match.py) of Deng, Kanervisto, Ling, Rush 2017,
"Image-to-Markup Generation with Coarse-to-Fine Attention" (ICML), Sec. 6 / Table 1."""

from __future__ import annotations

import pytest

from attnkit.apps.im2latex.image_match import image_match, image_match_rate
from attnkit.apps.im2latex.render import RenderError

FORMULA = r"\frac { a ^ { 2 } } { \sqrt { x _ { i } } } + \sum _ { n = 1 } ^ { N } \alpha _ { n }"


def test_a_formula_matches_itself() -> None:
    assert image_match(FORMULA.split(), FORMULA.split()) == (True, True)


def test_different_markup_with_the_same_rendering_matches() -> None:
    assert image_match(["x+y"], "x + y".split()) == (True, True)
    assert image_match("{ x } + y".split(), "x + y".split()) == (True, True)


def test_different_formulas_do_not_match() -> None:
    assert image_match("x - y".split(), "x + y".split()) == (False, False)
    assert image_match("x ^ { 2 }".split(), "x ^ { 3 }".split()) == (False, False)
    assert image_match("x ^ { 2 }".split(), "x _ { 2 }".split()) == (False, False)
    assert image_match("x ^ { 2 }".split(), "x 2".split()) == (False, False)


@pytest.mark.parametrize("space", [r"\,", r"\;", r"\quad"])
def test_extra_space_fails_exact_but_matches_without_whitespace(space: str) -> None:
    assert image_match(["a", space, "b"], ["a", "b"]) == (False, True)
    assert image_match(["a", "b"], ["a", space, "b"]) == (False, True)


def test_unrenderable_prediction_is_a_miss_and_bad_truth_raises() -> None:
    assert image_match([r"\frac", "{"], ["x"]) == (False, False)
    with pytest.raises(RenderError, match="true formula"):
        image_match(["x"], [r"\frac", "{"])


def test_rate_counts_matches_and_unrenderable_formulas() -> None:
    truths = [["x", "+", "y"], ["a", "b"], ["x"], [r"\nocommand"], ["z"]]
    predictions = [["x+y"], ["a", r"\,", "b"], ["y"], ["x"], [r"\frac", "{"]]
    rate = image_match_rate(predictions, truths)
    assert rate["n_scored"] == 4
    assert rate["n_truth_unrenderable"] == 1
    assert rate["n_prediction_unrenderable"] == 1
    assert rate["image_match"] == pytest.approx(1 / 4)
    assert rate["image_match_ws"] == pytest.approx(2 / 4)


def test_rate_edge_cases() -> None:
    assert image_match_rate([], [])["image_match"] == 0.0
    with pytest.raises(ValueError, match="pair up"):
        image_match_rate([["x"]], [])
