"""A griffe extension for the API reference (mkdocs.yml): attnkit's docstrings cross-reference
with Sphinx roles (``:func:`~attnkit.attention.attend```), which Markdown would show literally.
Each role becomes a code span of its target (``~`` keeps the last name, as Sphinx does)."""

from __future__ import annotations

import re
from importlib.util import find_spec

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")


def plain(docstring: str) -> str:
    """``:func:`~a.b.c``` -> ```c```, ``:class:`a.B``` -> ```a.B```,
    ``:mod:`x <a.x>``` -> ```x```."""

    def code(match: re.Match) -> str:
        short, target = match.group(1), match.group(2).strip()
        titled = re.fullmatch(r"(.+?)\s*<(.+)>", target)
        if titled:
            return f"`{titled.group(1)}`"
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    return ROLE.sub(code, docstring)


if find_spec("griffe") is not None:  # the docs extra; `make test` checks plain() without it
    import griffe

    class SphinxRoles(griffe.Extension):
        """Rewrite the roles of every docstring griffe loads."""

        def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
            if obj.docstring is not None:
                obj.docstring.value = plain(obj.docstring.value)
