"""The core knows no application (DESIGN.md; issue 33 item 6).

import-linter forbids the core to *import* ``attnkit.apps``; this test forbids it to *name* one
where import-linter cannot see: an identifier (``translation_loss``, ``from_translation``), an
import, a string literal equal to an application's registered name (``"translation"``), or any
string, docstrings included, that cites ``attnkit.apps``. Comments and plain English words in
docstrings are not checked. The core's packages are read from pyproject.toml's import-linter
contract, so the two lists cannot drift apart.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from attnkit.apps import TASKS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
CONTRACT = "the core never imports an application, the benchmarks or the CLI"
APP_NAMES = tuple(TASKS)  # the registered names: "translation", "text-classification", ...
# The generic command line dispatches on the run's App and names no application either; it
# alone may import the registry itself (``from attnkit.apps import app_of_run``), the one door
# to the applications: ``attnkit.apps.<an application>`` stays forbidden there too.
EXTRA_MODULES: tuple[str, ...] = ("attnkit.cli",)
REGISTRY = "attnkit.apps"
# Where an application's name is also the name of a generic thing the core owns: the scores of
# binary masks (Dice, IoU: attnkit.metrics.segmentation) are a metric family DESIGN.md puts in
# the core, named after the vision task, not after the application. Nowhere else.
GENERIC_WORDS: dict[str, tuple[str, ...]] = {"attnkit.metrics": ("segmentation",)}


def core_modules() -> list[str]:
    """The contract's ``source_modules``: the dotted names of the core's packages and modules."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["name"] == CONTRACT]
    return list(contract["source_modules"])


def module_files(modules: Iterable[str]) -> list[Path]:
    """Every ``.py`` file of the dotted ``modules`` (a package's files recursively)."""
    files = []
    for module in modules:
        path = SRC.joinpath(*module.split("."))
        if path.is_dir():
            files += sorted(path.rglob("*.py"))
        elif path.with_suffix(".py").is_file():
            files.append(path.with_suffix(".py"))
        else:
            raise AssertionError(f"{module}: named in pyproject.toml but not found under src/")
    return files


def _words(identifier: str) -> list[str]:
    """``plot_translation`` -> ``["plot", "translation"]``; ``TranslationRecord`` likewise."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", identifier)
    return [w for w in re.split(r"[_.\W]+", spaced.lower()) if w]


def names_an_app(identifier: str, apps: Iterable[str] = APP_NAMES) -> str | None:
    """The application whose name is a run of whole words of ``identifier``, if any."""
    words = _words(identifier)
    for app in apps:
        want = app.split("-")
        if any(words[i : i + len(want)] == want for i in range(len(words))):
            return app
    return None


def _identifiers(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.ImportFrom):
        yield node.module or ""
        yield from (alias.name for alias in node.names)
        yield from (alias.asname for alias in node.names if alias.asname)
    elif isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        yield from (alias.asname for alias in node.names if alias.asname)


def violations(
    path: Path, apps: Iterable[str] = APP_NAMES, registry_allowed: bool = False
) -> list[str]:
    """``file:line: what`` for each place ``path`` names an application (with
    ``registry_allowed``, an import of the registry package itself is no violation)."""
    apps = tuple(apps)
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        line = getattr(node, "lineno", 0)
        for name in _identifiers(node):
            if registry_allowed and isinstance(node, ast.ImportFrom) and name == REGISTRY:
                continue
            if "attnkit.apps" in name or (app := names_an_app(name, apps)):
                found.append(f"{where}:{line}: identifier {name!r} names {app or 'attnkit.apps'}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "attnkit.apps" in node.value:
                found.append(f"{where}:{line}: a string cites attnkit.apps")
            elif node.value.strip().lower() in apps:
                found.append(f"{where}:{line}: the string {node.value!r} names an application")
    return found


def test_the_scan_catches_what_it_should(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Works on :class:`attnkit.apps.x.Y`."""\n'
        "from attnkit.engine.losses import translation_loss\n"
        "def from_translation(t): return plot_translation(t)\n"
        "class TextClassificationView: pass\n"
        'TASK = "im2latex"\n'
        "# a comment about translation is prose\n"
        'def f():\n    """A translation, in plain English, is fine."""\n'
    )
    found = violations(bad)
    assert len(found) == 6, found
    assert not any(":6:" in f or ":8:" in f for f in found), found


@pytest.mark.parametrize("module", core_modules() + list(EXTRA_MODULES))
def test_the_core_names_no_application(module):
    apps = [app for app in APP_NAMES if app not in GENERIC_WORDS.get(module, ())]
    allowed = module in EXTRA_MODULES
    found = [v for path in module_files([module]) for v in violations(path, apps, allowed)]
    assert not found, f"{module} names an application:\n" + "\n".join(found)
