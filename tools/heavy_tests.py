"""Which test modules leave the fast tier (``make test-fast``): those with a test, or a
fixture, that took a second or more in a full run.

Run the suite with per-test timings, then write the list that ``tests/conftest.py`` reads::

    .venv/bin/python -m pytest -m "not slow" --durations=0 -q > /tmp/durations.txt
    .venv/bin/python tools/heavy_tests.py /tmp/durations.txt > tests/heavy_modules.txt

A module is heavy when any of its setup, call or teardown phases took ``--threshold`` seconds
or more (module- and session-scoped fixtures, such as a trained model, are charged to the
first test that needs them; a module is kept whole so that its fixtures are not paid again by
a test that stays in the fast tier).
"""

from __future__ import annotations

import argparse
import re
import sys

ROW = re.compile(r"^\s*(?P<seconds>[0-9.]+)s\s+(?:setup|call|teardown)\s+(?P<node>\S+)")


def heavy_modules(lines, threshold: float) -> list[str]:
    """The test files (``tests/...py``) of rows at or over ``threshold`` seconds."""
    heavy = set()
    for line in lines:
        match = ROW.match(line)
        if match and float(match["seconds"]) >= threshold:
            heavy.add(match["node"].split("::")[0])
    return sorted(heavy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("durations", help="pytest output with --durations=0")
    parser.add_argument("--threshold", type=float, default=1.0, help="seconds (default 1)")
    args = parser.parse_args()
    with open(args.durations, encoding="utf-8") as text:
        modules = heavy_modules(text, args.threshold)
    print(
        f"# {len(modules)} test modules with a phase of {args.threshold:g} s or more "
        "(tools/heavy_tests.py); make test-fast leaves them out"
    )  # noqa: E501
    sys.stdout.write("".join(m + "\n" for m in modules))


if __name__ == "__main__":
    main()
