"""LaTeX tokens and normal form (Deng, Kanervisto, Ling, Rush 2017, "Image-to-Markup Generation
with Coarse-to-Fine Attention", ICML; im2markup's preprocess_latex.js): hand-checked constructs,
the idempotent round trip, and the 1,200 formulas of the im2markup sample."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnkit.apps.im2latex.mathtext import mathtext_spacing, to_mathtext
from attnkit.apps.im2latex.tokens import detokenize, normalise, tokenize
from attnkit.datadir import default_data_dir

SAMPLE = default_data_dir() / "im2latex-sample" / "formulas.lst"

# (raw LaTeX, the normal form checked by hand against the rules in the module docstring)
CASES = [
    (r"{a \over b}", r"\frac { a } { b }"),
    (r"\frac ab", r"\frac { a } { b }"),
    (r"\frac{x+1}{2}", r"\frac { x + 1 } { 2 }"),
    (r"{{a}\over{b}}+c", r"\frac { a } { b } + c"),
    (r"x^{a \over b}", r"x ^ { \frac { a } { b } }"),
    (r"{n \choose k}", r"\binom { n } { k }"),
    (r"x^2", r"x ^ { 2 }"),
    (r"x^2_i", r"x _ { i } ^ { 2 }"),
    (r"x_{ij}^{2n}", r"x _ { i j } ^ { 2 n }"),
    (r"\hat N\sp f\sb j", r"\hat { N } _ { j } ^ { f }"),
    (r"f'(x)", r"f ^ { \prime } ( x )"),
    (r"f''^2", r"f ^ { \prime \prime 2 }"),
    (r"{\rm abc} d", r"\mathrm { a b c } d"),
    (r"x_{\rm eff}", r"x _ { \mathrm { e f f } }"),
    (r"{x \rm ab}", r"{ x \mathrm { a b } }"),
    (r"{\cal L}_a", r"\mathcal { L } _ { a }"),
    (r"{\cal{Z}}", r"\mathcal { Z }"),
    (r"{\bf W}+{\it v}", r"\mathbf { W } + \mathit { v }"),
    (r"\mbox{if } x", r"\mathrm { i f ~ } x"),
    (r"\hbox{for $a\neq b$}", r"\mathrm { f o r ~ a \neq b }"),
    (r"E = mc^2 \label{eq:einstein}", r"E = m c ^ { 2 }"),
    (r"\label{x}a \nonumber", "a"),
    (r"\left( \frac{a}{b} \right)", r"\left( \frac { a } { b } \right)"),
    (r"\left\{ x \right.", r"\left\{ x \right."),
    (r"\left \langle a | b \right\rangle", r"\left\langle a | b \right\rangle"),
    (r"\hat x + \vec{v} + \widetilde\gamma", r"\hat { x } + \vec { v } + \widetilde { \gamma }"),
    (r"\sqrt x + \sqrt[3]{y}", r"\sqrt { x } + \sqrt [ 3 ] { y }"),
    (r"a\,b\;c\!d\quad e\ f~g\>h", r"a \, b \; c \! d \quad e ~ f ~ g \: h"),
    (r"x = 1\, .", r"x = 1 \, ."),
    (r"{{a}}^{\{b\}}", r"{ { a } } ^ { \{ b \} }"),
    (r"\{ x \}", r"\{ x \}"),
    (
        r"\begin{array}{cc} a & b \\ c & d \end{array}",
        r"\begin{array} { c c } a & b \\ c & d \end{array}",
    ),
    (
        r"\begin{array}{l} a \\[2mm] b \end{array}",
        r"\begin{array} { l } a \\ [ 2 m m ] b \end{array}",
    ),
    (r"\pmatrix{a & b \cr c & d}", r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}"),
    (r"a \\ b", r"a \, b"),
    (r"\int\limits_0^1 f", r"\int \limits _ { 0 } ^ { 1 } f"),
    (r"{}^{*}x", r"{ } ^ { * } x"),
    (r"^*x_1", r"^ { * } x _ { 1 }"),
    (r"50\% % a comment", r"5 0 \%"),
    (r"%%x + y", "x + y"),
    (r"\hskip 1cm x", r"\hspace { 1 c m } x"),
    (r"\sin x\leftarrow y", r"\sin x \leftarrow y"),
    (r"{a \atop b}", r"{ a \atop b }"),
]


@pytest.mark.parametrize(("latex", "expected"), CASES)
def test_normal_form_of_hand_checked_constructs(latex: str, expected: str) -> None:
    assert detokenize(normalise(latex)) == expected
    assert normalise(expected) == expected.split()  # the normal form is a fixed point


def test_tokenize_splits_without_rewriting() -> None:
    assert tokenize(r"\frac{ab}{12}  \left (x\right) \\ \, \{ x^2 % gone") == [
        "\\frac",
        "{",
        "a",
        "b",
        "}",
        "{",
        "1",
        "2",
        "}",
        "\\left(",
        "x",
        "\\right)",
        "\\\\",
        "\\,",
        "\\{",
        "x",
        "^",
        "2",
    ]
    assert tokenize(r"\begin {array}{c}\end{array} \operatorname*{lim}") == [
        "\\begin{array}",
        "{",
        "c",
        "}",
        "\\end{array}",
        "\\operatorname*",
        "{",
        "l",
        "i",
        "m",
        "}",
    ]
    assert tokenize(r"a \over b") == ["a", "\\over", "b"]  # tokenize never rewrites
    assert tokenize(r"\leftarrow\rightarrow") == ["\\leftarrow", "\\rightarrow"]


@pytest.mark.parametrize(
    ("latex", "message"),
    [
        (r"{x", "expected '}'"),
        (r"x}", "unbalanced '}'"),
        (r"\left( x", r"\left( without \right"),
        (r"\right)", r"unbalanced '\\right)'"),
        (r"x^", "lacks its argument"),
        (r"\frac{a}", "lacks its argument"),
        (r"x^a^b", "double script"),
        (r"a \over b \over c", "two infix"),
        (r"\begin{array}{c} a \end{matrix}", r"\begin{array} ended by \end{matrix}"),
        (r"\begin{array}{c} a", "without its end"),
    ],
)
def test_malformed_latex_raises_a_clear_value_error(latex: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        normalise(latex)


@given(st.lists(st.sampled_from([c for c, _ in CASES] + ["x", "{", "}", "^", " "]), max_size=6))
def test_round_trip_is_idempotent_on_combined_cases(parts: list[str]) -> None:
    try:
        tokens = normalise(" ".join(parts))
    except ValueError:
        return  # a malformed combination (unbalanced braces) is refused, not normalised
    assert normalise(detokenize(tokens)) == tokens
    assert tokenize(detokenize(tokens)) == tokens


def _sample() -> list[str]:
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} not found (the im2markup sample)")
    return SAMPLE.read_text(encoding="utf-8").split("\n")[:1200]


def test_every_sample_formula_normalises_and_round_trips() -> None:
    formulas = _sample()
    empty = []
    for i, latex in enumerate(formulas):
        tokens = normalise(latex)
        if not tokens:
            empty.append(i)
        assert normalise(detokenize(tokens)) == tokens, (i, latex)
        assert all(t and not any(c.isspace() for c in t) for t in tokens), (i, tokens)
    # three blank lines, and two formulas that are all comment or label (their pages are blank)
    assert empty == [200, 421, 449, 761, 891]


def test_sample_formulas_keep_their_content() -> None:
    formulas = _sample()
    assert detokenize(normalise(formulas[1])) == (
        r"\widetilde { \gamma } _ { \mathrm { h o p f } } \simeq \sum _ { n > 0 } \widetilde { G }"
        r" _ { n } \frac { ( - a ) ^ { n } } { 2 ^ { 2 n - 1 } }"
    )
    assert detokenize(normalise(formulas[374])) == "f ( - 2 p )"  # the page shows only this
    assert normalise(formulas[27])[:4] == ["y", "^", "{", "2"]  # a leading % is stripped


def test_to_mathtext_maps_what_mathtext_lacks_and_renders() -> None:
    from matplotlib.mathtext import MathTextParser

    assert to_mathtext(normalise(r"\displaystyle \operatorname{tr} \lbrace x \rbrace")) == (
        r"$\mathrm { t r } \{ x \}$"
    )
    assert to_mathtext(normalise(r"a \hspace{2pt} \Big( b")) == r"$a \  ( b$"
    assert to_mathtext(normalise(r"\left\lbrace x \right.")) == r"$\left\{ x \right.$"
    parser = MathTextParser("agg")
    for latex in [
        r"x^2_i",
        r"{a \over b}",
        r"\left( \sqrt[3]{x} \right)",
        r"{\rm d}x~y",
        r"{\cal L}",
        r"\stackrel{a}{=}",
        r"\sum\limits_{i=1}^n x_i",
    ]:
        parser.parse(to_mathtext(normalise(latex)), dpi=100)  # raises if mathtext cannot


def test_most_sample_formulas_render_in_mathtext() -> None:
    from matplotlib.mathtext import MathTextParser

    parser = MathTextParser("agg")
    formulas = [f for f in _sample()[1000:1100] if normalise(f)]  # the test split's formulas
    rendered = 0
    for latex in formulas:
        try:
            parser.parse(to_mathtext(normalise(latex)), dpi=100)
            rendered += 1
        except ValueError:
            pass
    assert rendered >= 0.85 * len(formulas)  # 1,103 of the 1,195 non-empty sample formulas


def test_mathtext_spacing_joins_scripts_to_their_argument() -> None:
    assert mathtext_spacing(r"x ^ { 2 } _ { i } \_ a") == r"x ^{ 2 } _{ i } \_ a"
    assert to_mathtext(["x", "^", "{", "2", "}"]) == "$x ^{ 2 }$"
