"""Shared test settings: deterministic seeds, bounded hypothesis runs, few threads."""

import json
import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch: spinning OpenMP threads
import torch  # noqa: E402  (slow small products 40x on a shared CPU; the Makefile sets it too)
from hypothesis import HealthCheck, settings

from fuzz_counts import TRIED

# tiny translation runs used by tests in several folders (engine, cli, apps/translation, ...)
pytest_plugins = ["translation_runs"]

torch.set_num_threads(int(os.environ.get("ATTNKIT_TEST_THREADS", "2")))
# `bf16: auto` (the default) follows the CPU; the suite pretends it has no native bfloat16, so
# it computes the same numbers on every CI machine (set ATTNKIT_BF16_NATIVE=1 to try the other
# path; tests/engine/test_precision_auto.py covers both). Inherited by the subprocesses tests start.
os.environ.setdefault("ATTNKIT_BF16_NATIVE", "0")
# what attnkit measures about the machine (the CPU precision probe) goes to a folder of the
# test session, never into the user's ~/.cache
os.environ.setdefault("ATTNKIT_CACHE_DIR", tempfile.mkdtemp(prefix="attnkit-test-cache-"))

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", max_examples=200, deadline=None)
# the fuzz suite's long mode (tests/test_fuzz_*.py, HYPOTHESIS_PROFILE=fuzz; counts at the end)
settings.register_profile(
    "fuzz", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# The fast tier (`make test-fast`, -m "not slow and not heavy"): the modules listed in
# heavy_modules.txt (measured by tools/heavy_tests.py: a phase of a second or more) are heavy.
_HEAVY = Path(__file__).with_name("heavy_modules.txt")
HEAVY_MODULES = {
    line.strip()
    for line in (_HEAVY.read_text(encoding="utf-8").splitlines() if _HEAVY.is_file() else [])
    if line.strip() and not line.startswith("#")
}


def pytest_collection_modifyitems(config, items):
    root = Path(str(config.rootpath))
    for item in items:
        if Path(str(item.path)).relative_to(root).as_posix() in HEAVY_MODULES:
            item.add_marker(pytest.mark.heavy)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# Debian's Chromium, driven by Playwright's Python client (its own driver; no downloaded
# browser). `.ci/install-browser` (or `make browser`) installs both.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module. Without it the test skips, saying why, or in CI
    (``CI=true``) fails: :func:`browser_policy.require_browser`. Per module, not per session:
    Playwright's sync API keeps an asyncio loop running in the main thread while it is open,
    and the server tests that start uvicorn from the main thread (``asyncio.run``) need none."""
    from browser_policy import require_browser

    require_browser()
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def pytest_terminal_summary(terminalreporter):
    if not TRIED:
        return
    terminalreporter.section("inputs tried and faults injected (issue 15)")
    for (target, outcome), n in sorted(TRIED.items()):
        terminalreporter.write_line(f"{target:<28} {outcome:<24} {n}")
    terminalreporter.write_line(f"{'total':<53} {sum(TRIED.values())}")
    path = os.environ.get("ATTNKIT_FUZZ_REPORT")
    if path:
        rows = [{"target": t, "outcome": o, "n": n} for (t, o), n in sorted(TRIED.items())]
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"total": sum(TRIED.values()), "rows": rows}, f, indent=1)
