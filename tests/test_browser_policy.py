"""The browser tests' skip-or-fail decision (:mod:`browser_policy`) and
``.ci/install-browser``'s exit status: outside CI a missing browser skips, in CI (``CI=true``)
it fails, and the install script exits non-zero there when it cannot install one."""

from __future__ import annotations

import os
import subprocess

import pytest

from browser_policy import CHROMIUM, INSTALL, browser_problem, skip_or_fail

# -- the decision -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "false", "0", "no"])
def test_outside_ci_a_missing_browser_skips(value):
    with pytest.raises(pytest.skip.Exception, match="chromium is missing"):
        skip_or_fail("/usr/bin/chromium is missing", {"CI": value})
    with pytest.raises(pytest.skip.Exception, match="playwright is not installed"):
        skip_or_fail("playwright is not installed", {})  # CI unset


@pytest.mark.parametrize("value", ["true", "TRUE", "1"])
def test_in_ci_a_missing_browser_fails(value):
    with pytest.raises(pytest.fail.Exception, match=f"CI={value} and .*chromium is missing"):
        skip_or_fail("/usr/bin/chromium is missing", {"CI": value})


@pytest.mark.parametrize("environ", [{}, {"CI": "true"}])
def test_with_a_browser_nothing_happens(environ):
    assert skip_or_fail(None, environ) is None


def test_the_problem_names_what_is_missing(tmp_path):
    def no_module(name):
        raise ModuleNotFoundError(name)

    assert "playwright" in browser_problem(CHROMIUM, find_spec=no_module)
    assert "playwright" in browser_problem(CHROMIUM, find_spec=lambda name: None)
    missing = tmp_path / "chromium"
    found = browser_problem(missing, find_spec=lambda name: object())
    assert found is not None and str(missing) in found
    missing.touch()
    assert browser_problem(missing, find_spec=lambda name: object()) is None


# -- the install script -----------------------------------------------------------------------


@pytest.mark.skipif(not CHROMIUM.exists(), reason="the script would apt-get install Chromium")
@pytest.mark.parametrize("ci", ["true", ""])
def test_the_install_script_fails_in_ci_and_only_there(tmp_path, ci):
    """Chromium is present (nothing to install); a virtual environment that does not exist
    makes the Playwright step fail."""
    env = {**os.environ, "CI": ci}
    done = subprocess.run(
        ["bash", str(INSTALL), str(tmp_path / "no-venv")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "no virtual environment" in done.stderr
    if ci:
        assert done.returncode != 0
        assert "error: CI=true" in done.stderr
    else:
        assert done.returncode == 0 and "skipped" in done.stderr
