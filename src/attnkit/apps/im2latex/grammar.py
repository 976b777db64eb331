"""A seeded random grammar of LaTeX formulas (rendered into training pairs by
:mod:`~attnkit.apps.im2latex.examples`).

Deng, Kanervisto, Ling, Rush 2017, "Image-to-Markup Generation with Coarse-to-Fine Attention"
(ICML), Sec. 5, train on IM2LATEX-100K: arXiv formulas rendered by pdflatex and normalised into
space-separated tokens (letters and digits single tokens, every argument of ``^``, ``_``,
``\\frac``, ``\\sqrt`` and accents braced, ``\\left(`` one token). This module draws formulas of
the same normalised form from a small depth-limited grammar (fractions, scripts, roots, big
operators with limits, delimiters, accents, functions, spacing, ``\\mathrm``), so a model can
be trained with no data set.

Scale: at ``dpi=100, fontsize=12`` a render matches the paper's images after their crop and
downsample-by-2 (median height ratio real/generated 1.00 and width ratio 1.02 over the 462 of
the first 500 sample training formulas that mathtext can parse), so the default dpi range
(80, 120) is centred on the real scale.
"""

from __future__ import annotations

import numpy as np

__all__ = ["VOCABULARY", "generate_formula"]

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
