"""When the browser tests may skip (shared by every test that drives Chromium).

Outside CI, without Chromium or Playwright, the browser tests skip, saying why (best effort on a
developer's machine). In CI (``CI=true``, as GitHub Actions, GitLab CI and ``.ci/run`` set it) a
missing browser fails them, and ``.ci/install-browser`` exits non-zero when it cannot install
one: a failed install can no longer pass green. :func:`require_browser` is the decision; the
``browser`` fixture of ``tests/conftest.py`` calls it before it starts Chromium, and
``tests/test_browser_policy.py`` tests it and ``.ci/install-browser``'s exit status.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")  # Debian's; tests/conftest.py's `browser` launches it
INSTALL = Path(__file__).resolve().parents[1] / ".ci" / "install-browser"


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``CI`` is ``true`` (any case) or ``1``: a browser must be there."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() in {"true", "1"}


def browser_problem(chromium: Path = CHROMIUM, find_spec=importlib.util.find_spec) -> str | None:
    """Why the browser tests cannot run here (Playwright or Chromium missing), or None."""
    try:
        found = find_spec("playwright.sync_api") is not None
    except ModuleNotFoundError:  # no `playwright` package at all
        found = False
    if not found:
        return "playwright is not installed (run .ci/install-browser)"
    if not Path(chromium).exists():
        return f"{chromium} is missing (run .ci/install-browser, or apt-get install chromium)"
    return None


def skip_or_fail(problem: str | None, environ: Mapping[str, str] | None = None) -> None:
    """Nothing when ``problem`` is None; else skip the test outside CI and fail it in CI."""
    if problem is None:
        return
    if in_ci(environ):
        ci = (os.environ if environ is None else environ)["CI"]
        pytest.fail(
            f"CI={ci} and the browser tests cannot run: {problem}; "
            ".ci/install-browser must have failed (in CI a missing browser is an error)",
            pytrace=False,
        )
    pytest.skip(f"{problem} (set CI=true to make this a failure)")


def require_browser() -> None:
    """The browser tests' gate: skip outside CI, fail in CI, when no browser can run."""
    skip_or_fail(browser_problem())
