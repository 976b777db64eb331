"""Rendering without TeX (render.py), the stand-in for the pdflatex renders of Deng, Kanervisto,
Ling, Rush 2017, "Image-to-Markup Generation with Coarse-to-Fine Attention" (ICML), Sec. 5."""

from __future__ import annotations

import numpy as np
import pytest

from attnkit.apps.im2latex.render import RenderError, add_noise, crop, render

FORMULA = r"\frac { a ^ { 2 } } { \sqrt { x _ { i } } } + \sum _ { n = 1 } ^ { N } \alpha _ { n }"


def test_render_is_cropped_ink_in_unit_range() -> None:
    image = render(FORMULA.split())
    assert image.dtype == np.float32 and image.ndim == 2
    assert 0.0 <= image.min() and image.max() <= 1.0
    assert image.max() > 0.9  # solid ink is 1, not 0
    assert image.mean() < 0.5  # mostly paper (0)
    for edge in (image[0], image[-1], image[:, 0], image[:, -1]):
        assert edge.max() > 0  # cropped: ink touches every side


def test_render_is_deterministic_and_crop_is_stable() -> None:
    first = render(FORMULA.split())
    second = render(FORMULA)  # a string of tokens gives the same picture
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(crop(first), first)
    first[:] = 0  # the returned array is the caller's own: no cache is corrupted
    np.testing.assert_array_equal(render(FORMULA), second)


def test_larger_font_and_dpi_give_larger_images() -> None:
    small = render("x + y", fontsize=10)
    large = render("x + y", fontsize=20)
    assert large.shape[0] > small.shape[0] and large.shape[1] > small.shape[1]
    assert render("x + y", dpi=200).shape[1] > render("x + y", dpi=100).shape[1]


@pytest.mark.parametrize(
    ("formula", "reason"),
    [(r"\frac {", r"\frac"), (r"\foocommand x", "Unknown symbol"), ("x $ y", "'$'")],
)
def test_unrenderable_formulas_raise_with_the_formula_and_reason(formula: str, reason: str) -> None:
    with pytest.raises(RenderError) as info:
        render(formula.split())
    assert formula.split()[0] in str(info.value) and reason in str(info.value)


@pytest.mark.parametrize("formula", [r"\,", "{ }", "", []])
def test_inkless_or_empty_formulas_raise(formula: str | list[str]) -> None:
    with pytest.raises(RenderError, match="no ink|empty") as info:
        render(formula)
    assert "".join(formula) in str(info.value)  # the message names the formula


def test_crop_margin_threshold_and_errors() -> None:
    image = np.zeros((10, 12), dtype=np.float32)
    image[3:5, 4:9] = 1.0
    image[0, 0] = 0.2  # faint speck
    assert crop(image).shape == (5, 9)  # the speck at (0, 0) counts as ink at threshold 0
    tight = crop(image, threshold=0.5)
    assert tight.shape == (2, 5) and tight.min() == 1.0
    padded = crop(image, margin=3, threshold=0.5)
    assert padded.shape == (8, 11) and padded.sum() == tight.sum()
    with pytest.raises(RenderError, match="no ink"):
        crop(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="2-D"):
        crop(np.ones((2, 2, 2)))


def test_add_noise_is_seeded_light_and_in_range() -> None:
    image = render(FORMULA)
    a = add_noise(image, np.random.default_rng(1), noise=0.05)
    b = add_noise(image, np.random.default_rng(1), noise=0.05)
    np.testing.assert_array_equal(a, b)
    assert a.shape == image.shape and a.dtype == np.float32
    assert 0.0 <= a.min() and a.max() <= 1.0
    assert not np.array_equal(a, image)
    assert np.abs(a - image).mean() < 0.1  # light: the formula is still there
    np.testing.assert_array_equal(add_noise(image, np.random.default_rng(1), noise=0.0), image)
    with pytest.raises(ValueError, match="noise"):
        add_noise(image, np.random.default_rng(1), noise=-1.0)


def test_render_leaves_matplotlib_state_alone() -> None:
    import matplotlib

    before = dict(matplotlib.rcParams)
    render(FORMULA)
    assert dict(matplotlib.rcParams) == before


def test_scripts_are_raised_and_lowered_as_tex_draws_them() -> None:
    """The normalised format spaces every token (``x ^ { 2 }``); TeX ignores those spaces and
    so must the render: a superscript sits higher than a subscript, and the spaced tokens draw
    exactly what the compact LaTeX draws (mathtext 3.11 drops scripts after a space)."""
    sup, sub = render("x ^ { 2 }", dpi=150), render(["x", "_", "{", "2", "}"], dpi=150)
    np.testing.assert_array_equal(sup, render("x^{2}", dpi=150))
    np.testing.assert_array_equal(sub, render("x_{2}", dpi=150))

    def bottom(image: np.ndarray, columns: slice) -> int:  # the lowest inked row
        return int(np.flatnonzero(image[:, columns].max(1) > 0.5)[-1])

    x, two = slice(0, 8), slice(-8, None)  # x on the left, the script on the right
    assert bottom(sup, two) < bottom(sup, x) - 4  # the superscript ends well above x's foot
    assert bottom(sub, x) < bottom(sub, two) - 2  # the subscript reaches below it
    limits = r"\sum _ { i = 1 } ^ { N } x"
    np.testing.assert_array_equal(render(limits), render(r"\sum_{i = 1}^{N} x"))
