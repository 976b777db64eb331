"""Normalised tokens as matplotlib mathtext reads them: the stand-in for the pdflatex renders of
Deng et al. 2017 (§5) in the generated data (:mod:`~attnkit.apps.im2latex.render`) and in the
image-match measure (:mod:`~attnkit.apps.im2latex.image_match`)."""

from __future__ import annotations

import re

from attnkit.apps.im2latex.tokens import _is_delim, _table

_SCRIPT_SPACE = re.compile(r"(?<!\\)([\^_])\s+")


def mathtext_spacing(text: str) -> str:
    """``text`` with the spaces after ``^`` and ``_`` removed, as mathtext needs them.

    TeX ignores spaces in math mode, so ``x ^ { 2 }`` is ``x^{2}``; matplotlib's mathtext
    (3.11) does not: after a space, ``^`` and ``_`` no longer raise or lower their argument,
    and ``x ^ { 2 }`` and ``x _ { 2 }`` draw the same picture. The normalised token format puts
    a space between every two tokens, so every render of it goes through this."""
    return _SCRIPT_SPACE.sub(r"\1", text)


_MATHTEXT_DROP = set(
    r"\displaystyle \textstyle \scriptstyle \scriptscriptstyle \limits \nolimits \boldmath \tiny "
    r"\small \scriptsize \footnotesize \normalsize \large \Large \hfill \smallskip \big \Big \bigg "
    r"\Bigg \bigl \Bigl \biggl \Biggl \bigr \Bigr \biggr \Biggr \bigm \Bigm \biggm \Biggm".split()
)
_MATHTEXT_MAP = _table(
    r"\operatorname=\mathrm \operatorname*=\mathrm \lbrace=\{ \rbrace=\} \lbrack=[ \rbrack=] "
    r"\dag=\dagger \vert=| \Vert=\| \le=\leq \ge=\geq \boldsymbol=\mathbf \stackrel=\overset "
    r"\mathop="
) | {"~": "\\ "}


def to_mathtext(tokens: list[str]) -> str:
    """The normalised tokens as a ``$..$`` string for matplotlib's mathtext (here the stand-in
    for the pdflatex rendering of Deng et al. 2017's image-match metric, §5), which lacks some
    LaTeX: sizes and styles dropped, a few spellings mapped (``\\operatorname`` to ``\\mathrm``,
    ``\\lbrace`` to ``\\{``), ``\\hspace`` arguments read as a space. What mathtext still cannot
    parse (environments, ``\\atop``) is left for the caller's render-failure handling."""
    out, i = [], 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in ("\\hspace", "\\vspace") and tokens[i + 1 : i + 2] == ["{"]:
            out, i = [*out, "\\ " if tok == "\\hspace" else ""], tokens.index("}", i) + 1
            continue
        if _is_delim(tok, "\\left") or _is_delim(tok, "\\right"):
            side = "\\left" if tok.startswith("\\left") else "\\right"
            tok = side + _MATHTEXT_MAP.get(tok[len(side) :], tok[len(side) :])
        out.append("" if tok in _MATHTEXT_DROP else _MATHTEXT_MAP.get(tok, tok))
        i += 1
    return "$" + mathtext_spacing(" ".join(t for t in out if t)) + "$"
