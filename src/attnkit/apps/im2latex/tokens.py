"""LaTeX tokens and their normal form, as im2markup prepares its formulas.

Deng, Kanervisto, Ling and Rush (2017), "Image-to-Markup Generation with Coarse-to-Fine
Attention" (ICML; im2markup, §5) normalise arXiv LaTeX with a KaTeX parser
(``scripts/preprocessing/preprocess_latex.js``) into space-separated tokens; this is a pure-Python
equivalent for IM2LATEX-100K's constructs. Tokens: control words and symbols, one character each
(letters and digits too), ``\\left(`` / ``\\right)`` and ``\\begin{array}`` whole, as there.
Rules (im2markup's unless marked *ours*):

- Leading ``%`` are stripped (*ours*, from the data: its pages show what follows), then an
  unescaped ``%`` ends the formula. ``\\label{..}``, ``\\nonumber``, ``$``, ``\\~`` are dropped;
  ``\\hskip 1cm`` is ``\\hspace { 1 c m }``; ``\\>`` is ``\\:`` (*ours*; im2markup drops it);
  ``\\ `` is ``~``; ``\\sp`` / ``\\sb`` are ``^`` / ``_``; ``\\\\`` outside environments is ``\\,``.
- ``{a \\over b}`` is ``\\frac { a } { b }`` and ``\\choose`` ``\\binom``; a numerator that is one
  brace group keeps only its braces (*ours*: ``{{a}\\over{b}}`` is ``\\frac { a } { b }``).
  ``\\atop`` stays infix: ``{ a \\atop b }`` (*ours*).
- Switches ``\\rm \\bf \\it \\cal \\sf \\tt \\mit`` are ``\\mathrm { .. }`` etc. over the rest
  of their group (*ours* but for ``\\rm``); ``\\mbox \\hbox \\text`` are ``\\mathrm`` with
  spaces as ``~``, ``$..$`` read as math; ``\\matrix{..\\cr..}``, ``\\pmatrix``, ``\\cases``
  become environments (*ours*).
- Every argument is braced (``x ^ { 2 }``, ``\\frac { a } { b }``, ``\\hat { x }``; im2markup:
  scripts and accents only); a subscript before a superscript; a prime is ``^ { \\prime }``.
- Every brace group the writer typed is kept, as KaTeX's ``ordgroup``; only a group whose
  whole content became one ``\\frac``, ``\\binom`` or font command (``{a \\over b}``,
  ``{\\rm ab}``) loses its braces where it is no argument. Unknown commands and named
  operators (``\\sin``; im2markup spells them out) stay single tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_LEX = re.compile(
    r"(?P<space>\s+)|(?P<comment>%[^\n]*)|(?P<env>\\(?:begin|end)\s*\{[^{}]*\})"
    r"|(?P<delim>\\(?:left|right)(?![a-zA-Z])\s*(?:\\[a-zA-Z]+|\\.|[^\s\\]))"
    r"|(?P<star>\\operatorname\*)|(?P<word>\\[a-zA-Z]+\s*)|(?P<symbol>\\.)|(?P<char>.)",
    re.S,
)
_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")
_HSKIP = re.compile(r"\\hskip\s*(-?[\d.]+)\s*(cm|in|pt|mm|em)")


def _table(spec: str) -> dict[str, str]:
    """A dict written compactly, ``"a=b c=d"``."""
    return dict(pair.split("=", 1) for pair in spec.split())


_RENAME = _table(r"\sp=^ \sb=_ \>=\: \cr=\\ \bold=\mathbf \Bbb=\mathbb \frak=\mathfrak") | {
    "\\ ": "~",
    "\\bm": "\\boldsymbol",
}
_DROP = {"\\nonumber", "\\notag", "\\~", "$"}
_SWITCH = _table(
    r"\rm=\mathrm \bf=\mathbf \it=\mathit \cal=\mathcal \sf=\mathsf \tt=\mathtt "
    r"\mit=\mathit \sl=\mathit"
)
_INFIX = _table(r"\over=\frac \choose=\binom \atop=\atop")
_NOT_ARGUMENT = {"}", "&", *_DROP, "\\\\", "^", "_", "'", *_INFIX, *_SWITCH}
_PLAIN_ENV = _table(r"\matrix=matrix \pmatrix=pmatrix \cases=cases")
_TEXT = _table(
    r"\mbox=\mathrm \hbox=\mathrm \vbox=\mathrm \text=\mathrm \textrm=\mathrm "
    r"\textbf=\mathbf \textit=\mathit \emph=\mathit \textsf=\mathsf \texttt=\mathtt "
    r"\fbox=\boxed"
)
_ONE = """sqrt hat tilde bar vec dot ddot dddot check breve acute grave mathring widehat
    widetilde overline underline overrightarrow overleftarrow overleftrightarrow overbrace
    underbrace boldsymbol pmb mathrm mathbf mathit mathcal mathbb mathsf mathtt mathfrak mathscr
    mathop mathbin mathrel mathord operatorname operatorname* hspace vspace phantom hphantom
    vphantom smash llap rlap cline pmod substack boxed xrightarrow xleftarrow"""
_TWO = "frac dfrac tfrac cfrac binom dbinom tbinom stackrel overset underset raisebox"
# each command's arguments: m math, t text, o optional [..]
_ARGS = {"\\" + n: "m" for n in _ONE.split()} | {"\\" + n: "mm" for n in _TWO.split()}
_ARGS |= {n: "t" for n in _TEXT} | _table(r"\tag=m \genfrac=mmmmmm \sqrt=om \rule=omm")
_Item = tuple[list[str], bool]  # tokens, and whether they are one brace group ``{ .. }``


def _strip_comments(latex: str) -> str:
    """Leading ``%`` stripped, then everything from the first unescaped ``%`` dropped."""
    return re.match(r"\s*%*((?:[^%\\]|\\.|\\$)*)", latex, re.S).group(1)


def _lex(latex: str) -> list[str]:
    """Tokens with ``" "`` for each run of whitespace that TeX keeps (none after a control
    word); comments to the end of the line are dropped."""
    if re.search(r"(?<!\\)(?:\\\\)*\\$", latex):
        latex += " "  # TeX reads a backslash at the end of a line as a control space
    out: list[str] = []
    for m in _LEX.finditer(latex):
        kind, text = m.lastgroup, m.group(0)
        if kind in ("space", "env", "delim", "word"):
            text = " " if kind == "space" else re.sub(r"\s+", "", text)
        if kind != "comment":
            out.append("\\ " if kind == "symbol" and text[1].isspace() else text)
    return out


def tokenize(latex: str) -> list[str]:
    """LaTeX split into im2markup's tokens (Deng et al. 2017), whitespace and ``%`` comments
    dropped, nothing rewritten (:func:`normalise` does that)."""
    return [t for t in _lex(latex) if t != " "]


def _flat(items: list[_Item]) -> list[str]:
    """The items' tokens in one list."""
    return [t for tokens, _ in items for t in tokens]


def _as_arg(items: list[_Item]) -> list[str]:
    """One argument: a single brace group as it is, anything else wrapped in braces."""
    return items[0][0] if len(items) == 1 and items[0][1] else ["{", *_flat(items), "}"]


def _is_delim(tok: str, side: str) -> bool:
    """Whether ``tok`` is ``side`` (``\\left`` or ``\\right``) with its delimiter attached."""
    return tok.startswith(side) and (len(tok) == len(side) or not tok[len(side)].isalpha())


class _Parser:
    """A recursive-descent reader of the token stream into the normal form (module docstring)."""

    def __init__(self, tokens: list[str]) -> None:
        self.toks = [_RENAME.get(t, t) for t in tokens]
        self.pos = self.env = 0  # env: depth of environments (where ``\\`` is a row break)

    def peek(self, text: bool = False) -> str | None:
        """The next token, None at the end; spaces are skipped unless in ``text`` mode."""
        while not text and self.pos < len(self.toks) and self.toks[self.pos] == " ":
            self.pos += 1
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self, text: bool = False, want: str = "", what: str = "") -> str:
        """The next token; when ``want`` is given it must be that (``what`` names the place)."""
        if (tok := self.peek(text)) is None or (want and tok != want):
            found = "the end" if tok is None else repr(tok)
            message = f"expected {want!r}, found {found}" if want else "the formula ends too early"
            raise ValueError(f"{what or 'formula'}: {message}")
        self.pos += 1
        return tok

    def items(self, stop: Callable[[str], bool], text: bool = False) -> tuple[list[_Item], bool]:
        """A list up to ``stop`` (not consumed); True when an infix or a leading switch made the
        whole of it one item."""
        items: list[_Item] = []
        numer: list[_Item] | None = None
        infix = ""
        while (tok := self.peek(text)) is not None and not stop(tok):
            if tok in _INFIX and numer is not None:
                raise ValueError(f"two infix commands ({infix}, {tok}) in one group")
            elif tok in _INFIX:
                self.pos, numer, items, infix = self.pos + 1, items, [], tok
            elif tok in _SWITCH:
                self.pos += 1
                whole = not items and numer is None
                items.append(([_SWITCH[tok], *_as_arg(self.items(stop, text)[0])], False))
                if whole:
                    return items, True
            elif text and tok in ("$", "\\("):
                self.pos, close = self.pos + 1, "$" if tok == "$" else "\\)"
                items += self.items(lambda t, c=close: t == c)[0]
                self.take(want=close, what="math in text")
            elif tok in _DROP or (text and tok == " "):
                self.pos += 1
                items += [(["~"], False)] if tok == " " else []
            else:
                items.append(self.item(text))
        if numer is None:
            return items, False
        if infix == "\\atop":
            return [(["{", *_flat(numer), "\\atop", *_flat(items), "}"], True)], True
        return [([_INFIX[infix], *_as_arg(numer), *_as_arg(items)], False)], True

    def item(self, text: bool) -> _Item:
        """One atom with its scripts: subscript first, then superscript, primes in it."""
        tok = self.peek(text)
        base, braced = ([], False) if tok in ("^", "_", "'") else self.atom(text)
        sub: list[str] | None = None
        sup: list[str] | None = None
        while (tok := self.peek(text)) is not None:
            if tok in ("\\limits", "\\nolimits") and sub is None and sup is None:
                base, braced, self.pos = [*base, tok], False, self.pos + 1
            elif tok in ("'", "^") and (sup is None or sup[-1:] == ["\\prime"]):
                self.pos += 1  # primes and a following superscript make one superscript
                sup = [*(sup or []), *(["\\prime"] if tok == "'" else self.argument())]
            elif tok == "_" and sub is None:
                self.pos += 1
                sub = self.argument()
            elif tok in ("^", "_", "'"):
                raise ValueError(f"double script: a second {tok!r} on one base (TeX refuses it)")
            else:
                break
        if sub is None and sup is None:
            return base, braced
        scripts = [] if sub is None else ["_", "{", *sub, "}"]
        scripts += [] if sup is None else ["^", "{", *sup, "}"]
        return [*base, *scripts], False

    def argument(self, text: bool = False) -> list[str]:
        """A required argument's tokens, without its outer braces."""
        tok = self.peek()
        if tok is None or tok in _NOT_ARGUMENT or tok.startswith("\\end{"):
            raise ValueError(f"a command lacks its argument (found {tok or 'the end'!r})")
        if tok != "{":
            return self.atom(text)[0]
        self.pos += 1
        inner = _flat(self.items(lambda t: t == "}", text)[0])
        return inner if self.take(want="}", what="argument") else []

    def optional(self) -> list[str]:
        """``[ .. ]`` when one follows, else nothing."""
        if self.peek() != "[":
            return []
        self.pos += 1
        inner = _flat(self.items(lambda t: t == "]")[0])
        return ["[", *inner, self.take(want="]", what="optional argument")]

    def atom(self, text: bool = False) -> _Item:
        """One token, group, environment, ``\\left..\\right`` or command with its arguments."""
        tok = self.take(text)
        if tok == "{":
            items, whole = self.items(lambda t: t == "}", text)
            self.take(want="}", what="group")
            return items[0] if whole and len(items) == 1 else (["{", *_flat(items), "}"], True)
        if tok.startswith("\\begin{"):
            return self.environment(tok[7:-1], lambda t: t.startswith("\\end{")), False
        if tok in _PLAIN_ENV:
            self.take(want="{", what=tok)
            return self.environment(_PLAIN_ENV[tok], lambda t: t == "}"), False
        if _is_delim(tok, "\\left"):
            body, _ = self.items(lambda t: _is_delim(t, "\\right"))
            close = self.take(what=f"{tok} without \\right")
            if "\\left" in (tok, close) or close == "\\right":
                raise ValueError(f"{tok} .. {close}: a delimiter is missing")
            return [tok, *_flat(body), close], False
        if tok == "}" or _is_delim(tok, "\\right") or tok.startswith("\\end{"):
            raise ValueError(f"unbalanced {tok!r}")
        if tok == "\\\\" and self.env == 0:
            return ["\\,"], False
        if tok in _ARGS:
            out = [_TEXT.get(tok, tok)]
            for kind in _ARGS[tok]:
                out += self.optional() if kind == "o" else ["{", *self.argument(kind == "t"), "}"]
            return out, False
        return [tok], False

    def environment(self, name: str, end: Callable[[str], bool]) -> list[str]:
        """``\\begin{name} [spec] cells \\end{name}``; ``\\cr`` is ``\\\\``."""
        out = [f"\\begin{{{name}}}"]
        if name in ("array", "tabular", "subarray"):  # [position] {column spec}
            out += [*self.optional(), "{", *self.argument(), "}"]
        self.env += 1
        while True:
            out += _flat(self.items(lambda t: t in ("&", "\\\\") or end(t))[0])
            if (tok := self.take(what=f"\\begin{{{name}}} without its end")) not in ("&", "\\\\"):
                break
            out += [tok, *(self.optional() if tok == "\\\\" else [])]
        self.env -= 1
        if tok.startswith("\\end{") and tok != f"\\end{{{name}}}":
            raise ValueError(f"\\begin{{{name}}} ended by {tok}")
        return [*out, f"\\end{{{name}}}"]


def normalise(latex: str) -> list[str]:
    """The normal-form tokens of one formula (Deng et al. 2017, §5; module docstring for the
    rules). Raises ValueError saying what is malformed (unbalanced braces, ``\\left`` without
    ``\\right``, a missing argument); an all-comment formula gives ``[]``."""
    latex = _LABEL.sub("", _HSKIP.sub(r"\\hspace{\1\2}", _strip_comments(latex)))
    return _flat(_Parser(_lex(latex)).items(lambda t: False)[0])


def detokenize(tokens: list[str]) -> str:
    """Tokens joined by single spaces, im2markup's format (``normalise`` reads it back)."""
    return " ".join(tokens)
