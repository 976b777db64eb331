"""Render normalised LaTeX token lists to images without a TeX installation.

Deng, Kanervisto, Ling, Rush 2017, "Image-to-Markup Generation with Coarse-to-Fine Attention"
(ICML), Sec. 5, render their formulas with pdflatex, crop the page to the ink and downsample.
Here matplotlib's mathtext with the Computer Modern font set stands in for pdflatex: it needs no
TeX, no display and no pyplot, and renders a formula in a few milliseconds, which is what the
synthetic-data generator (``grammar.py``) and the image-match measure (``image_match.py``) need.

Package image convention: a float32 array (H, W) in [0, 1] with 1 = ink and 0 = paper.
"""

from __future__ import annotations

import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.mathtext import MathTextParser

from attnkit.apps.im2latex.mathtext import mathtext_spacing

__all__ = ["RenderError", "add_noise", "crop", "render"]

# The Agg parser rasterises to a glyph buffer without creating a figure; its parse() is
# memoised by matplotlib, so the buffer it returns is shared and must never be written to.
_PARSER = MathTextParser("agg")


class RenderError(ValueError):
    """A formula that mathtext cannot render, or an image without ink (Deng et al. 2017, Sec. 5)."""


def _formula_text(tokens: list[str] | str) -> str:
    """Join tokens with single spaces (the paper's normalised format, Deng et al. 2017, Sec. 5),
    but none after ``^`` and ``_`` (:func:`~attnkit.apps.im2latex.mathtext.mathtext_spacing`)."""
    if isinstance(tokens, str):
        text = tokens.strip()
    else:
        bad = [t for t in tokens if not isinstance(t, str)]
        if bad:
            raise RenderError(f"tokens must be strings; got {bad[0]!r} in {tokens!r}")
        text = " ".join(t.strip() for t in tokens if t.strip())
    if not text:
        raise RenderError("cannot render an empty formula")
    if "$" in text:
        raise RenderError(f"cannot render {text!r}: it contains '$', which would leave math mode")
    return mathtext_spacing(text)


def render(tokens: list[str] | str, *, dpi: int = 100, fontsize: float = 12.0) -> np.ndarray:
    """Render a formula and crop it to its ink (Deng et al. 2017, Sec. 5, preprocessing).

    Args:
        tokens: the formula as normalised tokens, or as one string of space-separated tokens.
        dpi: resolution of the raster; with ``fontsize=12`` a dpi of 100 gives the scale of the
            paper's images after their downsample-by-2 step.
        fontsize: font size in points (Computer Modern, ``math_fontfamily='cm'``).

    Returns:
        float32 array (H, W) in [0, 1], 1 = ink, cropped to the bounding box of the ink.

    Raises:
        RenderError: mathtext cannot parse the formula, or it renders without ink.
    """
    if not (isinstance(dpi, (int, np.integer)) and dpi > 0):
        raise ValueError(f"dpi must be a positive integer, got {dpi!r}")
    if not (np.isfinite(fontsize) and fontsize > 0):
        raise ValueError(f"fontsize must be a positive number, got {fontsize!r}")
    text = _formula_text(tokens)
    prop = FontProperties(size=float(fontsize), math_fontfamily="cm")
    try:
        parsed = _PARSER.parse(f"${text}$", dpi=int(dpi), prop=prop, antialiased=True)
    except Exception as err:  # mathtext raises ValueError, KeyError, ... for bad input
        reason = " ".join(str(err).split()) or type(err).__name__
        raise RenderError(f"mathtext cannot render {text!r}: {reason}") from err
    glyphs = np.asarray(parsed.image, dtype=np.float32) / 255.0  # copies the shared buffer
    if not (glyphs > 0).any():
        raise RenderError(f"formula {text!r} renders with no ink")
    return crop(glyphs)


def crop(image: np.ndarray, margin: int = 0, threshold: float = 0.0) -> np.ndarray:
    """Crop to the bounding box of the ink, then pad with paper (Deng et al. 2017, Sec. 5).

    Args:
        image: (H, W) array, 1 = ink.
        margin: pixels of paper (zeros) added on every side after cropping; the paper pads by 8.
        threshold: a pixel counts as ink when it is strictly greater than this.

    Returns:
        A new float32 array (h + 2 * margin, w + 2 * margin).

    Raises:
        ValueError: the image is not 2-D or the margin is negative.
        RenderError: no pixel exceeds the threshold.
    """
    image = np.asarray(image)
    if image.ndim != 2:
        raise ValueError(f"crop expects a 2-D (H, W) image, got shape {image.shape}")
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    ink = image > threshold
    rows = np.flatnonzero(ink.any(axis=1))
    cols = np.flatnonzero(ink.any(axis=0))
    if rows.size == 0:
        raise RenderError(
            f"cannot crop an image with no ink: no pixel of the {image.shape} image"
            f" is > {threshold}"
        )
    box = image[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1].astype(np.float32)
    if margin:
        box = np.pad(box, margin, mode="constant", constant_values=0.0)
    return box


def _blur(image: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur with a 3-tap kernel, zero ('paper') outside the image."""
    taps = np.exp(-0.5 * (np.arange(-1, 2) / sigma) ** 2)
    taps /= taps.sum()
    padded = np.pad(image, 1)
    rows = taps[0] * padded[:-2] + taps[1] * padded[1:-1] + taps[2] * padded[2:]  # (H, W + 2)
    return taps[0] * rows[:, :-2] + taps[1] * rows[:, 1:-1] + taps[2] * rows[:, 2:]  # (H, W)


def add_noise(image: np.ndarray, rng: np.random.Generator, *, noise: float) -> np.ndarray:
    """Light scanning-style degradation for synthetic training images.

    Deng et al. 2017 (Sec. 5) train on clean pdflatex renders; this augmentation is ours, to keep
    a model trained on mathtext renders from relying on one renderer's exact antialiasing.
    With probability 1/2 a small Gaussian blur (sigma in [0.3, 0.6]) is applied, otherwise a
    gamma change of the ink (gamma in [0.7, 1.4]); then Gaussian pixel noise with standard
    deviation ``noise``; the result is clipped to [0, 1]. ``noise=0`` returns an unchanged copy.

    Args:
        image: (H, W) array in [0, 1], 1 = ink.
        rng: the generator that draws every random choice (so a seed fixes the result).
        noise: standard deviation of the pixel noise, >= 0.

    Returns:
        float32 array (H, W) in [0, 1].
    """
    image = np.asarray(image, dtype=np.float32)
    if image.ndim != 2:
        raise ValueError(f"add_noise expects a 2-D (H, W) image, got shape {image.shape}")
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    if noise == 0:
        return image.copy()
    if rng.random() < 0.5:
        out = _blur(image, float(rng.uniform(0.3, 0.6)))
    else:
        out = np.clip(image, 0.0, 1.0) ** float(rng.uniform(0.7, 1.4))
    out = out + rng.normal(0.0, noise, size=out.shape)
    return np.clip(out, 0.0, 1.0).astype(np.float32)
