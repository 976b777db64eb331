"""The site's griffe extension turns Sphinx roles into code spans (tools/griffe_sphinx_roles.py)."""

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "griffe_sphinx_roles.py"
spec = importlib.util.spec_from_file_location("griffe_sphinx_roles", TOOL)
roles = importlib.util.module_from_spec(spec)
spec.loader.exec_module(roles)


def test_roles_become_code_spans():
    text = (
        "see :func:`~attnkit.attention.attend`, :class:`attnkit.interpret.AttentionRecord`, "
        ":mod:`views <attnkit.viz.views>` and :py:meth:`~a.B.c`; ``x`` stays"
    )
    assert roles.plain(text) == (
        "see `attend`, `attnkit.interpret.AttentionRecord`, `views` and `c`; ``x`` stays"
    )
