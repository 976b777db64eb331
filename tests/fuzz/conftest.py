"""The fuzz suite (issue 15; explorer request bodies are fuzzed in
``tests/explorer/test_explorer_limits.py``): bounded in ``make test`` by the ``ci`` profile;
``HYPOTHESIS_PROFILE=fuzz`` runs the long mode. Counts go to the terminal summary and, with
``ATTNKIT_FUZZ_REPORT=PATH``, to a JSON file."""

import json
import os

from fuzz_counts import TRIED


def pytest_terminal_summary(terminalreporter):
    if not TRIED:
        return
    terminalreporter.section("fuzz inputs tried")
    for (target, outcome), n in sorted(TRIED.items()):
        terminalreporter.write_line(f"{target:<28} {outcome:<24} {n}")
    terminalreporter.write_line(f"{'total':<53} {sum(TRIED.values())}")
    path = os.environ.get("ATTNKIT_FUZZ_REPORT")
    if path:
        rows = [{"target": t, "outcome": o, "n": n} for (t, o), n in sorted(TRIED.items())]
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"total": sum(TRIED.values()), "rows": rows}, f, indent=1)
