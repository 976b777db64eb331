"""Helpers shared by the corpus tests."""

import re


def at(path, rest: str) -> str:
    """A regex matching the literal message start ``{path}{rest}``."""
    return "^" + re.escape(f"{path}{rest}")
