"""Generated training pairs: a formula of the grammar (:mod:`~attnkit.apps.im2latex.grammar`)
rendered at a random scale (:mod:`~attnkit.apps.im2latex.render`), a pure function of
``(seed, k)``.

Deng, Kanervisto, Ling, Rush 2017 (ICML, Sec. 5) train on IM2LATEX-100K's pdflatex renders;
these pairs stand in for them. Example ``k`` of ``seed`` draws from its own generator
``SeedSequence(seed, spawn_key=(k,))``, in this order: the formula, the dpi, the font size,
then the noise. So :func:`plan_at` can tell an example's tokens and scale without rendering it
(a formula mathtext cannot render is redrawn, which none of 1,000 draws needed), and
:func:`example_at` renders it in any process, which is how fresh training formulas are made in
DataLoader workers (:mod:`~attnkit.apps.im2latex.fresh`).

The scale of an example is ``dpi * fontsize / (100 * 12)``: 1.0 is the scale of the paper's
images after their downsample-by-2 (see :mod:`~attnkit.apps.im2latex.grammar`).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from attnkit.apps.im2latex.grammar import generate_formula
from attnkit.apps.im2latex.render import RenderError, add_noise, render

__all__ = ["Drawing", "example_at", "generate_examples", "plan_at"]

PAPER_SCALE = 100 * 12.0  # dpi x font size of the paper's images after downsampling


@dataclass(frozen=True)
class Drawing:
    """How example ``k`` of ``seed`` is drawn: the formula's size and the ranges of its scale.
    Defaults: depth 3, dpi 80-120 and 10-14 pt, centred on the paper's scale."""

    max_tokens: int = 60
    max_depth: int = 3
    dpi_range: tuple[int, int] = (80, 120)
    fontsize_range: tuple[float, float] = (10.0, 14.0)
    noise: float = 0.03

    def __post_init__(self) -> None:
        for name in ("dpi_range", "fontsize_range"):
            low, high = getattr(self, name)
            if not 0 < low <= high:
                raise ValueError(
                    f"{name} must be (low, high) with 0 < low <= high, got {getattr(self, name)!r}"
                )
        if tuple(map(int, self.dpi_range)) != tuple(self.dpi_range):
            raise ValueError(f"dpi_range must hold integers, got {self.dpi_range!r}")


def _draws(rng: np.random.Generator, how: Drawing) -> tuple[list[str], int, float]:
    """The formula, dpi and font size: the first draws of an example's generator."""
    tokens = generate_formula(rng, max_depth=how.max_depth, max_tokens=how.max_tokens)
    dpi = int(rng.integers(how.dpi_range[0], how.dpi_range[1] + 1))
    return tokens, dpi, float(rng.uniform(*how.fontsize_range))


def _rng(seed: int, k: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(k,)))


def plan_at(seed: int, k: int, how: Drawing) -> tuple[list[str], float]:
    """Example ``k``'s tokens and scale, without rendering (they are :func:`example_at`'s
    unless mathtext fails on the first formula drawn)."""
    tokens, dpi, fontsize = _draws(_rng(seed, k), how)
    return tokens, dpi * fontsize / PAPER_SCALE


def example_at(seed: int, k: int, how: Drawing) -> tuple[np.ndarray, list[str], float]:
    """Example ``k`` of ``seed``: (float32 image (H, W) in [0, 1], 1 = ink, cropped to the ink
    and degraded by :func:`~attnkit.apps.im2latex.render.add_noise`; tokens; scale)."""
    rng = _rng(seed, k)
    for _ in range(100):
        tokens, dpi, fontsize = _draws(rng, how)
        try:
            image = render(tokens, dpi=dpi, fontsize=fontsize)
        except RenderError:
            continue
        return add_noise(image, rng, noise=how.noise), tokens, dpi * fontsize / PAPER_SCALE
    raise RuntimeError("100 formulas in a row failed to render; the grammar is broken")


def _example_job(job: tuple[int, int, Drawing]) -> tuple[np.ndarray, list[str], float]:
    return example_at(*job)


def generate_examples(
    n: int, seed: int, how: Drawing | None = None, *, workers: int = 0
) -> list[tuple[np.ndarray, list[str], float]]:
    """Examples ``0 .. n-1`` of ``seed`` as (image, tokens, scale), a pure function of
    ``(n, seed, how)`` (``workers`` > 0 renders in that many processes, with the same result).
    Example ``k`` does not depend on ``n``: the first 10 of ``generate_examples(100, s)`` are
    ``generate_examples(10, s)``."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0 (a numpy SeedSequence entropy), got {seed}")
    how = how or Drawing()
    jobs = [(seed, k, how) for k in range(n)]
    if workers <= 0 or n < 2:
        return [_example_job(job) for job in jobs]
    context = multiprocessing.get_context("spawn")  # no fork of a process holding torch threads
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        return list(pool.map(_example_job, jobs, chunksize=max(1, n // (4 * workers))))
