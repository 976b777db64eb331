"""The size rules of DESIGN.md, checked by `make test`: no source file over 300 lines and no
function over 60 lines (decorators and docstring included), so a reader finds any mechanism in
seconds. Prints each breach with its place and exits 1 if there is one."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_FILE, MAX_FUNCTION = 300, 60


def breaches(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + (not text.endswith("\n") and bool(text))
        if lines > MAX_FILE:
            found.append(f"{path}: {lines} lines (at most {MAX_FILE})")
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = node.end_lineno - first + 1
                if length > MAX_FUNCTION:
                    found.append(
                        f"{path}:{first}: function {node.name} is {length} lines "
                        f"(at most {MAX_FUNCTION})"
                    )
    return found


def main(argv: list[str]) -> int:
    found = [b for root in argv or ["src"] for b in breaches(Path(root))]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
