"""Run the lessons: each ``lessons/NN-*.py`` (a jupytext "percent" script) becomes a notebook,
is executed top to bottom by nbclient in a fresh kernel, and is written with its outputs to
``docs/lessons/NN-*.ipynb`` (ignored by git; the documentation site renders these).

    python tools/run_lessons.py                    # every lesson
    python tools/run_lessons.py lessons/01-*.py    # some

Each lesson runs in its own empty working directory, so whatever it writes stays out of the
repository. A cell that raises stops that lesson; the run ends with exit status 1 and names the
lesson and the cell. The seconds each lesson took are printed, and written to
``docs/lessons/timings.json`` (the issue's budget is 3 minutes a lesson on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
OUT = ROOT / "docs" / "lessons"
CELL_TIMEOUT_S = 600  # a safety net against a hung cell, not a speed target


def run_lesson(source: Path, out_dir: Path = OUT) -> float:
    """Execute one lesson; write the executed notebook; return the seconds it took."""
    notebook = jupytext.read(source)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"lesson-{source.stem}-") as work:
        client = NotebookClient(
            notebook,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": work}},
        )
        start = time.perf_counter()
        try:
            client.execute()
        finally:
            seconds = time.perf_counter() - start
            nbformat.write(notebook, out_dir / f"{source.stem}.ipynb")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", type=Path, help="default: lessons/*.py")
    args = parser.parse_args(argv)
    sources = args.lessons or sorted(LESSONS.glob("[0-9][0-9]-*.py"))
    if not sources:
        print(f"no lessons found in {LESSONS}", file=sys.stderr)
        return 1
    timings, failed = {}, []
    for source in sources:
        try:
            timings[source.stem] = round(run_lesson(source), 1)
            print(f"{source.stem}: {timings[source.stem]:.1f} s", flush=True)
        except CellExecutionError as error:
            failed.append(source.stem)
            print(f"{source}: a cell failed\n{error}", file=sys.stderr, flush=True)
    timings_path = OUT / "timings.json"
    old = json.loads(timings_path.read_text()) if timings_path.exists() else {}
    timings_path.write_text(json.dumps(old | timings, indent=1) + "\n")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
