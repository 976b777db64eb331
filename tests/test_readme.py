"""Every Python example in the README and the site runs and its assertions hold.

Each ```python (or ```py) block of README.md and docs/**/*.md (not the generated docs/lessons)
runs with empty globals in a working directory of its own, which holds what the examples name:
``runs/demo/bahdanau`` and ``runs/demo/none`` (copies of the demo's two runs, trained once per
session on a tiny generated corpus in a few seconds) and ``configs/`` (the repository's,
linked). A traceback points at the line of the Markdown file. A block right after an HTML
comment ``<!-- test: skip REASON -->`` is skipped, and the skip says why.
"""

from __future__ import annotations

import re
import shutil
from importlib import resources
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
LANGUAGES = {"python", "py"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*\{?\.?([\w+-]*)")
SKIP = re.compile(r"<!--\s*test:\s*skip\b\s*(.*?)\s*-->")
# the demo's configs, shrunk: 300 training pairs, one epoch, a narrow model (the runs are for
# loading and decoding, not for BLEU)
TINY = [
    "data.generated_sizes=[300,20,20]",
    "data.vocab_size=200",
    "model.embed_dim=16",
    "model.hidden_dim=32",
    "train.epochs=1",
]


def python_blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line of the first code line, code, skip reason or None) of each Python block."""
    blocks, fence, lang, body, start, skip, last = [], None, "", [], 0, None, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence, indent, lang = match.group(2), len(match.group(1)), match.group(3).lower()
                body, start = [], number + 1
                reason = SKIP.search(last)
                skip = (reason.group(1) or "marked skip") if reason else None
            elif line.strip():
                last = line
        elif match and match.group(2)[0] == fence[0] and not line.strip().strip(fence[0]):
            if lang in LANGUAGES:
                blocks.append((start, "\n".join(body) + "\n", skip))
            fence, last = None, ""
        else:
            body.append(line[indent:] if line[:indent].strip() == "" else line)
    return blocks


def doc_pages() -> list[Path]:
    pages = sorted((REPO / "docs").rglob("*.md"))
    return [README, *[p for p in pages if "lessons" not in p.relative_to(REPO / "docs").parts]]


EXAMPLES = [
    pytest.param(
        page,
        line,
        code,
        id=f"{page.relative_to(REPO).as_posix()}#{index}",
        marks=[pytest.mark.skip(reason=f"{page.relative_to(REPO).as_posix()}:{line}: {skip}")]
        if skip
        else [],
    )
    for page in doc_pages()
    if page.is_file()
    for index, (line, code, skip) in enumerate(python_blocks(page))
]

_TRAINED: dict[str, Path] = {}


def tiny_demo_runs(tmp_path_factory) -> Path:
    """``DIR/bahdanau`` and ``DIR/none``: the demo's runs on a tiny corpus, once per session."""
    if "demo" not in _TRAINED:
        import attnkit

        root = tmp_path_factory.mktemp("demo-runs")
        configs = resources.files("attnkit.apps.translation") / "configs"
        for name in ("bahdanau", "none"):
            with resources.as_file(configs / f"demo-{name}.yaml") as config:
                attnkit.train(config, root / name, overrides=TINY)
        _TRAINED["demo"] = root
    return _TRAINED["demo"]


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory) -> Path:
    return tiny_demo_runs(tmp_path_factory)


@pytest.fixture
def example_dir(tmp_path, monkeypatch, demo_runs) -> Path:
    """A working directory of its own: a copy of runs/demo/{bahdanau,none} (~1 MB; an example
    may write into a run, e.g. its report) and configs/ linked in."""
    for name in ("bahdanau", "none"):
        shutil.copytree(demo_runs / name, tmp_path / "runs" / "demo" / name, symlinks=True)
    (tmp_path / "configs").symlink_to(REPO / "configs", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


def test_readme_and_site_have_examples():
    """The extraction finds the examples (not an empty pass): the README's and the site's."""
    assert len(python_blocks(README)) >= 1
    assert len(EXAMPLES) >= 10 and any(p.id.startswith("docs/") for p in EXAMPLES)


def test_blocks_are_found_with_their_lines_and_skips(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```python\nx = 1\n```\n\n<!-- test: skip needs Multi30k -->\n"
        "```py\nraise SystemExit\n```\n\n1. A list:\n\n    ```python\n    y = 2\n    ```\n"
        "\n```bash\nattnkit --help\n```\n"
    )
    assert python_blocks(page) == [
        (4, "x = 1\n", None),
        (9, "raise SystemExit\n", "needs Multi30k"),
        (15, "y = 2\n", None),
    ]


def run_example(page: Path, line: int, code: str) -> None:
    """Run one block with empty globals; padded so that a traceback names the Markdown file
    and its own line numbers."""
    exec(compile("\n" * (line - 1) + code, str(page), "exec"), {"__name__": "__doc_example__"})


def test_a_failing_example_names_its_page_and_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n```python\nx = 1\nassert x == 2, 'the page is wrong'\n```\n")
    ((line, code, _),) = python_blocks(page)
    with pytest.raises(AssertionError, match="the page is wrong") as info:
        run_example(page, line, code)
    assert Path(info.traceback[-1].path) == page and info.traceback[-1].lineno + 1 == 5


@pytest.mark.parametrize("page, line, code", EXAMPLES)
def test_doc_example_runs(page, line, code, example_dir):
    run_example(page, line, code)
