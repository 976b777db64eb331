"""The image-match measure of Deng, Kanervisto, Ling, Rush 2017, "Image-to-Markup Generation with
Coarse-to-Fine Attention" (ICML), Sec. 6 / Table 1.

Two markups that differ as text can render identically (``x + y`` and ``x+y``), so the paper
scores a prediction by rendering it and the truth with the same renderer, cropping both to the
ink and comparing pixels ("exact match"), and again after deleting the whitespace columns
("exact match -ws"), which forgives spacing commands such as ``\\,``. Here the renderer is
matplotlib's mathtext (:func:`~attnkit.apps.im2latex.render.render`, after
:func:`~attnkit.apps.im2latex.mathtext.to_mathtext` maps the few spellings mathtext lacks), and
the images are binarised at 0.5 so that antialiasing levels cannot decide a match.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnkit.apps.im2latex.mathtext import to_mathtext
from attnkit.apps.im2latex.render import RenderError, render

__all__ = ["image_match", "image_match_rate"]


def _binary(tokens: Sequence[str], dpi: int, fontsize: float) -> np.ndarray:
    """The rendered formula as a bool (H, W) ink mask, cropped to the ink (threshold 0.5)."""
    text = to_mathtext(list(tokens))[1:-1]  # mathtext's spellings, without the $...$
    ink = render(text, dpi=dpi, fontsize=fontsize) > 0.5
    rows = np.flatnonzero(ink.any(axis=1))
    cols = np.flatnonzero(ink.any(axis=0))
    if rows.size == 0:  # only faint antialiasing: nothing left after binarising
        return ink[:0, :0]
    return ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and equal pixels."""
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _without_blank_columns(ink: np.ndarray) -> np.ndarray:
    """The (H, W') mask with every all-paper column removed (the paper's "-ws" variant)."""
    return ink[:, ink.any(axis=0)]


def _compare(got: np.ndarray, want: np.ndarray) -> tuple[bool, bool]:
    """(exact match, match without blank columns) of two ink masks."""
    exact = _same(got, want)
    return exact, exact or _same(_without_blank_columns(got), _without_blank_columns(want))


def image_match(
    predicted: Sequence[str], truth: Sequence[str], *, dpi: int = 100, fontsize: float = 12.0
) -> tuple[bool, bool]:
    """Whether the prediction renders like the truth (Deng et al. 2017, Sec. 6).

    Args:
        predicted: the predicted formula's tokens.
        truth: the true formula's tokens.
        dpi, fontsize: the rendering both formulas share.

    Returns:
        ``(exact, ignoring_whitespace)``: the binarised, cropped images are equal in size and
        pixels; and they are equal after all-blank columns are removed from both. A prediction
        that does not render is a miss, ``(False, False)``.

    Raises:
        RenderError: the truth itself does not render (callers count these apart).
    """
    try:
        want = _binary(truth, dpi, fontsize)
    except RenderError as err:
        raise RenderError(f"the true formula does not render: {err}") from err
    try:
        got = _binary(predicted, dpi, fontsize)
    except RenderError:
        return False, False
    return _compare(got, want)


def image_match_rate(
    predictions: Sequence[Sequence[str]],
    truths: Sequence[Sequence[str]],
    *,
    dpi: int = 100,
    fontsize: float = 12.0,
) -> dict[str, float | int]:
    """Image match over a test set, as reported in Deng et al. 2017, Table 1.

    Formulas whose truth does not render are left out of the rates and counted; a prediction
    that does not render counts as a miss.

    Returns:
        ``image_match`` and ``image_match_ws``: fractions of the scored formulas (0.0 when none
        is scored); ``n_scored``, ``n_truth_unrenderable``, ``n_prediction_unrenderable``.
    """
    if len(predictions) != len(truths):
        raise ValueError(
            f"got {len(predictions)} predictions for {len(truths)} true formulas; "
            "they must pair up one to one"
        )
    exact = ws = scored = bad_truth = bad_prediction = 0
    for predicted, truth in zip(predictions, truths, strict=True):
        try:
            want = _binary(truth, dpi, fontsize)
        except RenderError:
            bad_truth += 1
            continue
        scored += 1
        try:
            got = _binary(predicted, dpi, fontsize)
        except RenderError:
            bad_prediction += 1
            continue
        same, same_ws = _compare(got, want)
        exact += same
        ws += same_ws
    return {
        "image_match": exact / scored if scored else 0.0,
        "image_match_ws": ws / scored if scored else 0.0,
        "n_scored": scored,
        "n_truth_unrenderable": bad_truth,
        "n_prediction_unrenderable": bad_prediction,
    }
