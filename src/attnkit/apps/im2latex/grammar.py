"""A seeded random grammar of LaTeX formulas, rendered into (image, tokens) training pairs.

Deng, Kanervisto, Ling, Rush 2017, "Image-to-Markup Generation with Coarse-to-Fine Attention"
(ICML), Sec. 5, train on IM2LATEX-100K: arXiv formulas rendered by pdflatex and normalised into
space-separated tokens (letters and digits single tokens, every argument of ``^``, ``_``,
``\\frac``, ``\\sqrt`` and accents braced, ``\\left(`` one token). This module draws formulas of
the same normalised form from a small depth-limited grammar (fractions, scripts, roots, big
operators with limits, delimiters, accents, functions, spacing, ``\\mathrm``) and renders them
with :func:`~attnkit.apps.im2latex.render.render`, so a model can be trained with no data set.

Scale: at ``dpi=100, fontsize=12`` a render matches the paper's images after their crop and
downsample-by-2 (median height ratio real/generated 1.00 and width ratio 1.02 over the 462 of
the first 500 sample training formulas that mathtext can parse), so the default dpi range
(80, 120) is centred on the real scale.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from attnkit.apps.im2latex.render import RenderError, add_noise, render

__all__ = ["VOCABULARY", "generate_examples", "generate_formula"]

LETTERS = [*"abcdefghijklmnopqrstuvwxyz", *"ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
DIGITS = [*"0123456789"]
GREEK_LOWER = (
    r"\alpha \beta \gamma \delta \epsilon \varepsilon \zeta \eta \theta \iota \kappa \lambda \mu "
    r"\nu \xi \pi \rho \sigma \tau \phi \varphi \chi \psi \omega"
).split()
GREEK_UPPER = r"\Gamma \Delta \Theta \Lambda \Xi \Pi \Sigma \Phi \Psi \Omega".split()
SYMBOLS = [r"\infty", r"\partial", r"\nabla"]
BINARY = ["+", "-", r"\times", r"\cdot", r"\pm"]
RELATIONS = ["=", "<", ">", r"\leq", r"\geq", r"\neq", r"\approx", r"\to", r"\in"]
BIG_OPS = [r"\sum", r"\prod", r"\int"]
FUNCTIONS = [r"\sin", r"\cos", r"\tan", r"\log", r"\exp"]
ACCENTS = [r"\hat", r"\bar", r"\vec", r"\tilde", r"\dot"]
SPACES = [r"\,", r"\;", r"\quad"]
DELIMITERS = [(r"\left(", r"\right)"), (r"\left[", r"\right]"), ("(", ")")]
ROMAN_WORDS = ["d", "e", "i", "max", "min", "const", "tr", "det"]
STRUCTURE = [
    *"{}^_[](),.",
    r"\frac",
    r"\sqrt",
    r"\mathrm",
    r"\lim",
    *(d for pair in DELIMITERS for d in pair),
]
VOCABULARY: tuple[str, ...] = tuple(
    sorted(
        set(LETTERS + DIGITS + GREEK_LOWER + GREEK_UPPER + SYMBOLS + BINARY + RELATIONS)
        | set(BIG_OPS + FUNCTIONS + ACCENTS + SPACES + STRUCTURE)
    )
)
"""Every token :func:`generate_formula` can emit (the grammar's inventory)."""

# term kinds at depth > 0 and their weights
_KINDS = ["atom", "scripted", "frac", "sqrt", "bigop", "func", "group", "accent", "roman"]
_WEIGHTS = np.array([3.0, 3.0, 1.5, 1.0, 0.8, 0.8, 1.2, 1.0, 0.5])
_WEIGHTS /= _WEIGHTS.sum()


def _pick(rng: np.random.Generator, items: list[str]) -> str:
    """One item, uniformly."""
    return items[int(rng.integers(len(items)))]


def _braced(inner: list[str]) -> list[str]:
    """``{ inner }``: every argument is braced in the normalised form (Deng et al. 2017, Sec. 5)."""
    return ["{", *inner, "}"]


def _number(rng: np.random.Generator) -> list[str]:
    """A one- to three-digit number, digit by digit, sometimes with a decimal point."""
    digits = [_pick(rng, DIGITS) for _ in range(int(rng.choice([1, 1, 1, 2, 3])))]
    if len(digits) > 1 and digits[0] == "0":
        digits[0] = _pick(rng, DIGITS[1:])
    if rng.random() < 0.1:
        digits += [".", _pick(rng, DIGITS)]
    return digits


def _atom(rng: np.random.Generator) -> list[str]:
    """A letter, Greek letter, number or symbol such as ``\\infty``."""
    u = rng.random()
    if u < 0.5:
        return [_pick(rng, LETTERS)]
    if u < 0.65:
        return [_pick(rng, GREEK_LOWER)]
    if u < 0.7:
        return [_pick(rng, GREEK_UPPER)]
    if u < 0.93:
        return _number(rng)
    return [_pick(rng, SYMBOLS)]


def _scripts(rng: np.random.Generator, base: list[str], depth: int) -> list[str]:
    """``base _ { .. }``, ``base ^ { .. }`` or both (subscript first, as KaTeX normalises)."""
    u = rng.random()
    out = list(base)
    inner = min(depth - 1, 1) if rng.random() < 0.2 else 0  # scripts stay short, as in real data
    if u < 0.7:
        out += ["_", *_braced(_expression(rng, inner, int(rng.choice([1, 1, 1, 2, 3]))))]
    if u > 0.4:
        out += ["^", *_braced(_expression(rng, inner, int(rng.choice([1, 1, 1, 2]))))]
    return out


def _group(rng: np.random.Generator, depth: int) -> list[str]:
    """``\\left( .. \\right)``, ``\\left[ .. \\right]`` or ``( .. )``, sometimes with a power."""
    open_, close = DELIMITERS[int(rng.integers(len(DELIMITERS)))]
    out = [open_, *_expression(rng, depth - 1, int(rng.integers(1, 4))), close]
    if rng.random() < 0.25:
        out += ["^", *_braced(_expression(rng, 0, 1))]
    return out


def _big_operator(rng: np.random.Generator, depth: int) -> list[str]:
    """``\\sum _ { i = 1 } ^ { n } x _ { i }`` and the like; integrals end in ``d x``."""
    op = _pick(rng, BIG_OPS)
    var = _pick(rng, ["i", "j", "k", "n", "m"]) if op != r"\int" else _pick(rng, ["x", "t", "s"])
    if op == r"\int":
        lower, upper = _atom(rng), _pick(rng, [["1"], [r"\infty"], ["T"], ["L"]])
    else:
        lower, upper = [var, "=", *_number(rng)], _pick(rng, [["N"], ["n"], [r"\infty"], ["M"]])
    out = [op, "_", *_braced(lower)]
    if rng.random() < 0.8:
        out += ["^", *_braced(upper)]
    out += _term(rng, depth - 1)
    if op == r"\int":
        out += [r"\,", "d", var] if rng.random() < 0.5 else [r"\mathrm", "{", "d", "}", var]
    return out


def _function(rng: np.random.Generator, depth: int) -> list[str]:
    """``\\sin x``, ``\\log _ { 2 } n``, ``\\exp \\left( .. \\right)``, ``\\lim _ { n \\to a }``."""
    if rng.random() < 0.2:
        var = _pick(rng, ["n", "x", "t", "k"])
        limit = _pick(rng, [["0"], [r"\infty"], ["a"]])
        return [r"\lim", "_", "{", var, r"\to", *limit, "}", *_term(rng, depth - 1)]
    out = [_pick(rng, FUNCTIONS)]
    if out[0] == r"\log" and rng.random() < 0.3:
        out += ["_", *_braced(_number(rng))]
    elif rng.random() < 0.2:
        out += ["^", "{", "2", "}"]
    return out + (_group(rng, depth) if rng.random() < 0.4 else _atom(rng))


def _term(rng: np.random.Generator, depth: int) -> list[str]:
    """One term; at depth 0 an atom, above it any construct whose parts have depth - 1."""
    if depth <= 0:
        return _atom(rng)
    kind = _KINDS[int(rng.choice(len(_KINDS), p=_WEIGHTS))]
    if kind == "atom":
        return _atom(rng)
    if kind == "scripted":
        base = _pick(rng, LETTERS) if rng.random() < 0.7 else _pick(rng, GREEK_LOWER + SYMBOLS)
        return _scripts(rng, [base], depth)
    if kind == "frac":
        numerator = _expression(rng, depth - 1, int(rng.integers(1, 4)))
        return [r"\frac", *_braced(numerator), *_braced(_expression(rng, depth - 1, 2))]
    if kind == "sqrt":
        index = ["[", _pick(rng, ["3", "n", "4"]), "]"] if rng.random() < 0.25 else []
        return [r"\sqrt", *index, *_braced(_expression(rng, depth - 1, int(rng.integers(1, 4))))]
    if kind == "bigop":
        return _big_operator(rng, depth)
    if kind == "func":
        return _function(rng, depth)
    if kind == "group":
        return _group(rng, depth)
    if kind == "accent":
        base = [_pick(rng, LETTERS if rng.random() < 0.5 else GREEK_LOWER)]
        accented = [_pick(rng, ACCENTS), *_braced(base)]
        return _scripts(rng, accented, depth) if rng.random() < 0.3 else accented
    word = [*_pick(rng, ROMAN_WORDS)]
    return [r"\mathrm", *_braced(word)]


def _expression(rng: np.random.Generator, depth: int, n_terms: int) -> list[str]:
    """``n_terms`` terms joined by operators, relations, juxtaposition, commas or spaces."""
    out = _term(rng, depth)
    for _ in range(n_terms - 1):
        u = rng.random()
        if u < 0.45:
            out.append(_pick(rng, BINARY))
        elif u < 0.65:
            out.append(_pick(rng, RELATIONS))
        elif u < 0.75:
            out += [",", _pick(rng, SPACES)] if rng.random() < 0.5 else [_pick(rng, SPACES)]
        out += _term(rng, depth)
    return out


def generate_formula(
    rng: np.random.Generator, *, max_depth: int = 3, max_tokens: int = 60
) -> list[str]:
    """One random formula in the normalised token form of Deng et al. 2017 (Sec. 5).

    Args:
        rng: draws every choice, so a seeded generator fixes the formula.
        max_depth: the deepest nesting of constructs (0: atoms and operators only).
        max_tokens: the longest formula allowed; longer draws are redrawn, and after 50 tries a
            flat chain of atoms and operators no longer than this is returned.

    Returns:
        Tokens, every one in :data:`VOCABULARY`, with balanced braces.
    """
    if max_depth < 0:
        raise ValueError(f"max_depth must be >= 0, got {max_depth}")
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    for _ in range(50):
        formula = _expression(rng, max_depth, int(rng.choice([1, 2, 3, 3, 4, 4, 5, 6])))
        if len(formula) <= max_tokens:
            return formula
    formula = [_pick(rng, LETTERS)]
    while len(formula) + 2 <= max_tokens and rng.random() < 0.8:
        formula += [_pick(rng, BINARY), _pick(rng, LETTERS)]
    return formula


def _check_range(name: str, bounds: tuple[float, float]) -> tuple[float, float]:
    """A (low, high) pair with 0 < low <= high, or a ValueError naming the argument."""
    low, high = bounds
    if not 0 < low <= high:
        raise ValueError(f"{name} must be (low, high) with 0 < low <= high, got {bounds!r}")
    return low, high


def _example(
    rng: np.random.Generator,
    max_tokens: int,
    max_depth: int,
    dpi_range: tuple[int, int],
    fontsize_range: tuple[float, float],
    noise: float,
) -> tuple[np.ndarray, list[str]]:
    """One (image, tokens) pair; a formula that fails to render is redrawn."""
    for _ in range(100):
        tokens = generate_formula(rng, max_depth=max_depth, max_tokens=max_tokens)
        dpi = int(rng.integers(dpi_range[0], dpi_range[1] + 1))
        fontsize = float(rng.uniform(*fontsize_range))
        try:
            image = render(tokens, dpi=dpi, fontsize=fontsize)
        except RenderError:
            continue
        return add_noise(image, rng, noise=noise), tokens
    raise RuntimeError("100 formulas in a row failed to render; the grammar is broken")


def generate_examples(
    n: int,
    seed: int,
    *,
    max_tokens: int = 60,
    max_depth: int = 3,
    dpi_range: tuple[int, int] = (80, 120),
    fontsize_range: tuple[float, float] = (10.0, 14.0),
    noise: float = 0.03,
    workers: int = 0,
) -> list[tuple[np.ndarray, list[str]]]:
    """``n`` rendered (image, tokens) pairs, a pure function of ``(n, seed)`` and the options
    (``workers`` > 0 renders in that many processes, with the same result).

    Stands in for the IM2LATEX-100K training pairs of Deng et al. 2017 (Sec. 5). Example ``k``
    draws from its own generator ``SeedSequence(seed, spawn_key=(k,))``, so it does not depend
    on ``n``: the first 10 of ``generate_examples(100, s)`` are ``generate_examples(10, s)``.
    Each formula is rendered at a random dpi and font size from the ranges (the defaults are
    centred on the paper's scale after its downsample-by-2) and degraded by
    :func:`~attnkit.apps.im2latex.render.add_noise`.

    Returns:
        A list of (float32 image (H, W) in [0, 1] with 1 = ink and cropped to the ink, tokens).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0 (a numpy SeedSequence entropy), got {seed}")
    low, high = _check_range("dpi_range", dpi_range)
    dpis = (int(low), int(high))
    if dpis != (low, high):
        raise ValueError(f"dpi_range must hold integers, got {dpi_range!r}")
    fonts = _check_range("fontsize_range", fontsize_range)
    jobs = [(seed, k, max_tokens, max_depth, dpis, fonts, noise) for k in range(n)]
    if workers <= 0 or n < 2:
        return [_example_k(job) for job in jobs]
    context = multiprocessing.get_context("spawn")  # no fork of a process holding torch threads
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        return list(pool.map(_example_k, jobs, chunksize=max(1, n // (4 * workers))))


def _example_k(job: tuple) -> tuple[np.ndarray, list[str]]:
    """Example ``k`` of ``seed`` from its own generator (any process renders it the same)."""
    seed, k, max_tokens, max_depth, dpis, fonts, noise = job
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(k,)))
    return _example(rng, max_tokens, max_depth, dpis, fonts, noise)
