"""The commands the README and the site show are real, and each one is run by some test.

(a) ``docs/reference/commands.md`` is what ``tools/gen_cli_docs.py`` generates from the CLI.
(b) Every ``attnkit ...`` shell line in a fenced block of README.md and docs/**/*.md parses with
    the real command line: the subcommand path is resolved through the click group and
    ``make_context`` parses the rest, so an unknown option, a missing argument or a bad
    choice or type in the docs fails here, naming the file and the line. Nothing is run.
(c) Every subcommand the docs use is executed somewhere in tests/: a static scan (``ast``) of
    CliRunner ``invoke(app, [...])`` calls, module helpers that forward their arguments to one
    (``invoke("explain", ...)``, ``_run([...])``), and subprocess command lines that start
    attnkit (``[sys.executable, "-m", "attnkit", ...]``, ``["attnkit", ...]``).

Each checker also runs on small synthetic inputs here, so a broken doc line, a stale reference
or an unrun subcommand is shown to fail with a message that says where.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import itertools
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer

from attnkit.cli import app

try:  # typer >= 0.20 vendors click: its errors derive from TyperException
    from typer import TyperException as UsageProblem
except ImportError:  # pragma: no cover - older typer on the real click
    from click import ClickException as UsageProblem

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
GENERATED = REPO / "docs" / "reference" / "commands.md"
ROOT = typer.main.get_command(app)


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_cli_docs", REPO / "tools" / "gen_cli_docs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------
# (a) the generated command reference


def test_command_reference_is_up_to_date():
    expected = _generator().render()
    actual = GENERATED.read_text(encoding="utf-8") if GENERATED.exists() else "(missing)"
    assert actual == expected, (
        "docs/reference/commands.md differs from the attnkit command line: "
        "run `python tools/gen_cli_docs.py` and commit the result"
    )


def _all_paths(command=ROOT, path=()):
    """Every command the reference documents: hidden ones (the moved names kept as aliases,
    the ``bench`` pointer) are left out of ``--help`` and of the reference alike."""
    yield path, command
    if hasattr(command, "list_commands"):
        for name in command.list_commands(None):
            sub = command.get_command(None, name)
            if not getattr(sub, "hidden", False):
                yield from _all_paths(sub, (*path, name))


def test_command_reference_names_every_command_and_option(monkeypatch):
    gen = _generator()
    text = gen.render()
    monkeypatch.setenv("COLUMNS", "37")  # no terminal width in the output
    assert gen.render() == text and "\x1b" not in text
    sections = re.split(r"\n(?=#{2,6} `attnkit)", text)
    for path, command in _all_paths():
        title = " ".join(["attnkit", *path])
        (section,) = [s for s in sections if s.startswith(f"`{title}`", s.index(" ") + 1)]
        assert f"{{ #{gen.anchor(list(path))} }}" in section
        ctx = command.make_context(title, [], resilient_parsing=True)
        for param in command.get_params(ctx):
            if param.name != "help":
                names = param.opts if param.param_type_name == "option" else [param.name.upper()]
                assert all(f"`{n}" in section for n in names), (title, param.name)
        if command.help:
            assert " ".join(command.help.split()[:6]) in " ".join(section.split())


def test_check_mode_fails_on_a_stale_reference(tmp_path, capsys):
    gen = _generator()
    page = tmp_path / "commands.md"
    assert gen.main(["--output", str(page)]) == 0
    assert gen.main(["--check", "--output", str(page)]) == 0
    page.write_text(page.read_text().replace("Print the version.", "Print it."))
    assert gen.main(["--check", "--output", str(page)]) == 1
    err = capsys.readouterr().err
    assert "out of date" in err and "python tools/gen_cli_docs.py" in err
    assert "-| `--version` | `bool` | off | Print it. |" in err


# ---------------------------------------------------------------------------------------------
# (b) every documented command line parses


@dataclass(frozen=True)
class DocCommand:
    file: str
    line: int
    text: str  # the shell line as written, continuation lines joined
    args: tuple[str, ...]  # what follows `attnkit`
    error: str | None = None  # the line could not be split like a shell line

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


SHELL_BLOCKS = {"bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession"}
PROMPT_BLOCKS = {"console", "shell-session", "shellsession"}  # commands only after `$ `
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*\{?\.?([\w+-]*)")
PROMPT = re.compile(r"^\s*\$\s+")
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
PLACEHOLDER = re.compile(r"^(\[[^\]]*\](\.\.\.)?|\.\.\.|…)$")  # synopsis: [options], ...
SEPARATORS = {"|", "||", "&&", ";", "&", "|&", "(", ")"}
WRAPPERS = {"time", "env", "nohup", "sudo", "exec", "command"}


def _blocks(text: str):
    """(language, [(line number, line)]) for each fenced block."""
    fence, lang, body = None, "", []
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence, lang, body = match.group(1), match.group(2).lower(), []
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            if not line.strip().strip(fence[0]):
                yield lang, body
                fence = None
        else:
            body.append((number, line))
    if fence is not None:  # an unclosed fence runs to the end of the page
        yield lang, body


def _logical_lines(body, prompt_only: bool):
    """(first line number, text) of each command line: prompts stripped, continuations joined,
    heredoc bodies skipped; with ``prompt_only`` just the lines after a ``$ `` prompt."""
    lines, i = list(body), 0
    while i < len(lines):
        number, line = lines[i]
        i += 1
        prompt = PROMPT.match(line)
        if prompt:
            line = line[prompt.end() :]
        elif prompt_only:
            continue
        while line.rstrip().endswith("\\") and not line.rstrip().endswith("\\\\"):
            if i >= len(lines):
                break
            line = line.rstrip()[:-1] + " " + re.sub(r"^\s*>\s", "", lines[i][1]).strip()
            i += 1
        heredoc = HEREDOC.search(line)
        if heredoc:
            while i < len(lines) and lines[i][1].strip() != heredoc.group(1):
                i += 1
            i += 1
        yield number, line


def _attnkit_args(tokens: list[str]) -> list[str] | None:
    """What follows ``attnkit`` in one simple command, or None if it does not run attnkit."""
    words = list(tokens)
    while words and (ENV_ASSIGNMENT.match(words[0]) or words[0] in WRAPPERS):
        words.pop(0)
    if words[:1] == ["nice"]:
        words = words[3:] if words[1:2] == ["-n"] else words[1:]
    if words and Path(words[0]).name == "attnkit":
        return words[1:]
    for i in range(len(words) - 1):
        if words[i : i + 2] == ["-m", "attnkit"]:
            return words[i + 2 :]
    return None


def _simple_commands(line: str) -> list[list[str]]:
    """The simple commands of a shell line: split at pipes, ``&&``, ``;``, comments stripped,
    redirections dropped (raises ValueError for what shlex cannot split, e.g. an open quote)."""
    line = re.sub(r"(^|\s)[0-9]*>&[0-9-]+", r"\1", line)  # 2>&1
    line = re.sub(r"(^|\s)[0-9]+(>>?|<)", r"\1\2", line)  # 2>file -> >file
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, current, tokens = [], [], iter(list(lexer))
    for token in tokens:
        if token in SEPARATORS:
            commands.append(current)
            current = []
        elif set(token) <= set("<>&"):  # a redirection and its target
            next(tokens, None)
        else:
            current.append(token)
    return [c for c in [*commands, current] if c]


def extract_commands(text: str, file: str) -> list[DocCommand]:
    """Every attnkit command line in the fenced blocks of one Markdown text."""
    found = []
    for lang, body in _blocks(text):
        prompt_only = lang not in SHELL_BLOCKS or lang in PROMPT_BLOCKS
        for number, line in _logical_lines(body, prompt_only):
            if not re.search(r"(^|[\s/])attnkit(\s|$)", line):
                continue
            try:
                simple = _simple_commands(line)
            except ValueError as err:
                found.append(DocCommand(file, number, line.strip(), (), f"shlex: {err}"))
                continue
            for tokens in simple:
                args = _attnkit_args(tokens)
                if args is not None:
                    args = [a for a in args if not PLACEHOLDER.match(a)]
                    found.append(DocCommand(file, number, line.strip(), tuple(args)))
    return found


def unlabelled_commands(text: str, file: str) -> list[str]:
    """``file:line: text`` of each line that starts with ``attnkit`` in a block with no language:
    such a block could be output as well as commands, so its lines are not parsed."""
    return [
        f"{file}:{number}: {line.strip()}"
        for lang, body in _blocks(text)
        if lang == ""
        for number, line in body
        if re.match(r"\s*attnkit\s", line)
    ]


def doc_files() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    return [f for f in files if f.is_file() and f != GENERATED]


def doc_commands() -> list[DocCommand]:
    return [
        command
        for path in doc_files()
        for command in extract_commands(
            path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix()
        )
    ]


@dataclass
class Parsed:
    path: tuple[str, ...]  # the subcommands resolved, () for `attnkit` itself
    error: str | None
    command: object  # the deepest command reached
    usage: str


def parse(args: tuple[str, ...] | list[str]) -> Parsed:
    """Parse ``attnkit ARGS`` with click's own parser, running nothing but eager callbacks
    (--help, --version print into a discarded buffer and exit 0)."""
    command, name, ctx, rest, path = ROOT, "attnkit", None, list(args), []
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            while True:
                ctx = command.make_context(name, rest, parent=ctx)
                if not hasattr(command, "resolve_command"):
                    break
                rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
                if not rest:
                    break
                name, command, rest = command.resolve_command(ctx, rest)
                path.append(name)
    except typer.Exit as done:
        error = None if done.exit_code == 0 else f"exits with code {done.exit_code}"
    except UsageProblem as err:
        if type(err).__name__ == "NoArgsIsHelpError":  # a bare group prints its help
            error = None
        else:
            error = err.format_message()
    else:
        error = None
    usage_ctx = command.make_context(name, [], resilient_parsing=True)
    usage = " ".join(["attnkit", *path, *command.collect_usage_pieces(usage_ctx)])
    return Parsed(tuple(path), error, command, usage)


def _options_of(command) -> str:
    ctx = command.make_context("x", [], resilient_parsing=True)
    names = [
        "/".join(p.opts + p.secondary_opts)
        for p in command.get_params(ctx)
        if p.param_type_name == "option" and p.name != "help"
    ]
    return ", ".join(names)


def failure(doc: DocCommand) -> str | None:
    """None if the documented line parses, else a message naming the file, line and error."""
    if doc.error:
        return f"{doc.where}: `{doc.text}` cannot be split like a shell line ({doc.error})"
    parsed = parse(doc.args)
    if parsed.error is None:
        return None
    anchor = "-".join(["attnkit", *parsed.path])
    subcommands = ""
    if hasattr(parsed.command, "list_commands"):
        subcommands = f"\n  its subcommands: {', '.join(parsed.command.list_commands(None))}"
    return (
        f"{doc.where}: the documented command does not parse with the real CLI:\n"
        f"  {doc.text}\n"
        f"  error: {parsed.error}\n"
        f"  usage: {parsed.usage}\n"
        f"  its options: {_options_of(parsed.command)}{subcommands}\n"
        f"  reference: docs/reference/commands.md#{anchor}"
    )


DOC_COMMANDS = doc_commands()


def test_the_docs_show_commands():
    """The extraction finds the README's and the site's command lines (not an empty pass)."""
    files = {c.file for c in DOC_COMMANDS}
    assert "README.md" in files and any(f.startswith("docs/") for f in files), files
    assert len(DOC_COMMANDS) >= 10, [c.where for c in DOC_COMMANDS]


@pytest.mark.parametrize("doc", DOC_COMMANDS, ids=[c.where for c in DOC_COMMANDS])
def test_documented_command_parses(doc):
    message = failure(doc)
    assert message is None, message


def test_command_lines_are_in_shell_blocks():
    """A command in a block without a language would escape the parse check above."""
    found = [
        where
        for path in doc_files()
        for where in unlabelled_commands(
            path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix()
        )
    ]
    assert not found, (
        "attnkit command lines in fenced blocks with no language, so not checked: mark the "
        "block ```bash (commands) or write each command after a `$ ` prompt:\n" + "\n".join(found)
    )


SAMPLE = """\
Text with `attnkit translate --inline-code-is-not-checked`.

```bash
attnkit translate runs/x --beam 5      # a comment --not-an-option
echo "Ein Hund." | attnkit translate runs/x --beam 2 > out.txt
make demo && attnkit report runs/x --output r.html 2>&1
ATTNKIT_DATA_DIR=../data OMP_NUM_THREADS=2 attnkit train configs/a.yaml \\
    --run-dir runs/a --set train.epochs=2
python -m attnkit --version
attnkit train CONFIG [options]
attnkit translate runs/x --no-such-option
attnkit translate --beam 5
attnkit translate runs/x --beam five
attnkit data downlaod multi30k --to data/
attnkit experiment bottleneck -o runs/b extra
```

```console
$ attnkit --help
Usage: attnkit [OPTIONS] COMMAND [ARGS]...
attnkit printed this line: it is output, not a command
```

```
$ attnkit explain --example two-word --colour
```

```python
print("attnkit translate --python-is-not-shell")
```
"""


def test_extraction_of_a_synthetic_page():
    found = extract_commands(SAMPLE, "sample.md")
    got = [(c.line, c.args) for c in found]
    assert got == [
        (4, ("translate", "runs/x", "--beam", "5")),
        (5, ("translate", "runs/x", "--beam", "2")),
        (6, ("report", "runs/x", "--output", "r.html")),
        (7, ("train", "configs/a.yaml", "--run-dir", "runs/a", "--set", "train.epochs=2")),
        (9, ("--version",)),
        (10, ("train", "CONFIG")),
        (11, ("translate", "runs/x", "--no-such-option")),
        (12, ("translate", "--beam", "5")),
        (13, ("translate", "runs/x", "--beam", "five")),
        (14, ("data", "downlaod", "multi30k", "--to", "data/")),
        (15, ("experiment", "bottleneck", "-o", "runs/b", "extra")),
        (19, ("--help",)),
        (25, ("explain", "--example", "two-word", "--colour")),
    ]


def test_an_unlabelled_block_of_commands_is_named():
    text = "```\nattnkit train c.yaml\n$ attnkit --help\n```\n\n```text\nattnkit 0.1.0\n```\n"
    assert unlabelled_commands(text, "p.md") == ["p.md:2: attnkit train c.yaml"]
    assert [c.line for c in extract_commands(text, "p.md")] == [3]


def test_broken_doc_lines_fail_naming_file_line_and_error():
    found = {c.line: c for c in extract_commands(SAMPLE, "sample.md")}
    for line in (4, 5, 6, 7, 9, 10, 19):
        assert failure(found[line]) is None, failure(found[line])
    expected = {
        11: "No such option: --no-such-option",
        12: "Missing argument",
        13: "Invalid value for '--beam'",
        14: "No such command 'downlaod'",
        15: "unexpected extra argument(s) (extra)",
        25: "No such option: --colour",
    }
    for line, words in expected.items():
        message = failure(found[line])
        assert message is not None and message.startswith(f"sample.md:{line}: "), message
        assert words in message and found[line].text in message, message
    assert "its options: --input/-i, --beam" in failure(found[11])
    assert "reference: docs/reference/commands.md#attnkit-translate" in failure(found[11])
    assert "its subcommands: download" in failure(found[14])
    open_quote = extract_commands('```sh\nattnkit translate "runs/x\n```\n', "q.md")
    assert "cannot be split" in failure(open_quote[0])


# ---------------------------------------------------------------------------------------------
# (c) every documented subcommand is executed by a test


@dataclass(frozen=True)
class Param:
    """A helper function's parameter, standing for the arguments its callers pass."""

    name: str
    starred: bool


@dataclass(frozen=True)
class Invocation:
    file: str
    line: int
    tokens: tuple  # str for a known argument, None for one the scan cannot know
    slow: bool

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


MAX_ALTERNATIVES = 32


class _Scope:
    """What the names of one function (over its module's) may hold: strings or sequences."""

    def __init__(self, module: dict | None = None):
        self.names: dict[str, list] = {}
        self.module = module or {}

    def get(self, name: str) -> list:
        return self.names.get(name) or self.module.get(name) or [None]

    def bind(self, name: str, values: list) -> None:
        self.names[name] = (self.names.get(name, []) + values)[:MAX_ALTERNATIVES]

    def value(self, node) -> list:
        """The alternatives an expression may take: str, tuple (a sequence), Param or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name):
            return self.get(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self.sequence(node.elts)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("list", "tuple") and len(node.args) == 1:
                return [
                    v if isinstance(v, (tuple, Param)) else None for v in self.value(node.args[0])
                ]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pairs = itertools.product(self.value(node.left), self.value(node.right))
            out = [a + b for a, b in pairs if isinstance(a, tuple) and isinstance(b, tuple)]
            return out[:MAX_ALTERNATIVES] or [None]
        return [None]

    def sequence(self, elements) -> list[tuple]:
        options = []
        for element in elements:
            if isinstance(element, ast.Starred):
                parts = [
                    v if isinstance(v, tuple) else (v,) if isinstance(v, Param) else (None,)
                    for v in self.value(element.value)
                ]
            else:
                parts = [(v if isinstance(v, (str, Param)) else None,) for v in self.value(element)]
            options.append(parts)
        out = [sum(combo, ()) for combo in itertools.islice(itertools.product(*options), 64)]
        return out[:MAX_ALTERNATIVES]


SLOW = re.compile(r"\bmark\.slow\b")


def _is_slow(decorators) -> bool:
    return any(SLOW.search(ast.unparse(d)) for d in decorators)


def _parametrized(function, scope: _Scope) -> None:
    for decorator in function.decorator_list:
        if not (
            isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("parametrize")
        ):
            continue
        if len(decorator.args) < 2 or not isinstance(decorator.args[0], ast.Constant):
            continue
        names = [n.strip() for n in str(decorator.args[0].value).split(",") if n.strip()]
        rows = decorator.args[1]
        if not isinstance(rows, (ast.List, ast.Tuple)):
            continue
        for row in rows.elts:
            if isinstance(row, ast.Call) and ast.unparse(row.func).endswith("param") and row.args:
                row = row.args[0] if len(names) == 1 else ast.Tuple(elts=row.args)
            cells = [row] if len(names) == 1 else getattr(row, "elts", [])
            for name, cell in zip(names, cells, strict=False):
                scope.bind(name, scope.value(cell))


def _bind_statements(root, scope: _Scope) -> None:
    """Assignments and ``for`` targets under ``root``, in source order."""
    nodes = [n for n in ast.walk(root) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.For))]
    for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.For):
            rows = node.iter.elts if isinstance(node.iter, (ast.List, ast.Tuple)) else None
            if isinstance(node.target, ast.Name) and rows is not None:
                for row in rows:
                    scope.bind(node.target.id, scope.value(row))
            elif isinstance(node.target, ast.Tuple) and rows is not None:
                for row in rows:
                    for target, cell in zip(
                        node.target.elts, getattr(row, "elts", []), strict=False
                    ):
                        if isinstance(target, ast.Name):
                            scope.bind(target.id, scope.value(cell))
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is not None:
            for target in targets:
                if isinstance(target, ast.Name):
                    scope.bind(target.id, scope.value(node.value))


def _after_launcher(seq: tuple) -> tuple | None:
    """The attnkit arguments of a subprocess command line, or None if it does not run attnkit."""
    if seq and isinstance(seq[0], str) and Path(seq[0]).name == "attnkit":
        return seq[1:]
    for i in range(len(seq) - 1):
        if seq[i] == "-m" and seq[i + 1] == "attnkit":
            return seq[i + 2 :]
        if seq[i] == "-c" and isinstance(seq[i + 1], str) and "attnkit.cli" in seq[i + 1]:
            return seq[i + 2 :]
    return None


def _call_sequences(call: ast.Call, scope: _Scope, helpers: dict) -> list[tuple]:
    """The argument lists this call hands to the CLI (CliRunner.invoke or a helper)."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if isinstance(call.func, ast.Name) and name in helpers:
        prefix, index, param = helpers[name]
        if param.starred:
            values = scope.sequence(call.args[index:])
        else:
            given = [k.value for k in call.keywords if k.arg == param.name]
            node = call.args[index] if len(call.args) > index else (given or [None])[0]
            values = scope.value(node) if node is not None else []
        return [prefix + v for v in values if isinstance(v, tuple)]
    if name == "invoke":
        node = call.args[1] if len(call.args) >= 2 else None
        node = node or next((k.value for k in call.keywords if k.arg == "args"), None)
        values = scope.value(node) if node is not None else []
        return [
            (v,) if isinstance(v, Param) else v for v in values if isinstance(v, (tuple, Param))
        ]
    return []


def _sequences_in(root, scope: _Scope, helpers: dict) -> list[tuple[int, tuple]]:
    """(line, attnkit arguments) of every CLI invocation under ``root``."""
    found = []
    for node in ast.walk(root):
        if isinstance(node, ast.Call):
            found += [(node.lineno, s) for s in _call_sequences(node, scope, helpers)]
        elif isinstance(node, (ast.List, ast.Tuple)):
            for seq in scope.sequence(node.elts):
                args = _after_launcher(seq)
                if args is not None:
                    found.append((node.lineno, args))
    return found


def _helpers(tree: ast.Module, module: dict) -> dict:
    """Module functions that hand one of their parameters to the CLI:
    name -> (fixed leading arguments, parameter position, Param)."""
    helpers: dict = {}
    for _ in range(3):  # helpers that call helpers
        for function in tree.body:
            if not isinstance(function, ast.FunctionDef) or function.name in helpers:
                continue
            scope, params = _Scope(module), function.args.args
            for param in params:
                scope.bind(param.arg, [Param(param.arg, False)])
            if function.args.vararg:
                scope.bind(function.args.vararg.arg, [Param(function.args.vararg.arg, True)])
            _bind_statements(function, scope)
            for _, seq in _sequences_in(function, scope, helpers):
                where = next((i for i, t in enumerate(seq) if isinstance(t, Param)), None)
                if where is None or not all(isinstance(t, str) for t in seq[:where]):
                    continue
                param = seq[where]
                names = [p.arg for p in params]
                index = names.index(param.name) if param.name in names else len(names)
                helpers[function.name] = (seq[:where], index, param)
                break
    return helpers


def scan_invocations(source: str, file: str) -> list[Invocation]:
    """Every CLI invocation in one test module's source (``--help`` runs left out)."""
    tree = ast.parse(source)
    module_scope = _Scope()
    for statement in tree.body:  # module-level names: ARGS = [...], CHILD = "..."
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _bind_statements(statement, module_scope)
    module_slow = any(
        isinstance(s, ast.Assign)
        and any(getattr(t, "id", "") == "pytestmark" for t in s.targets)
        and SLOW.search(ast.unparse(s.value))
        for s in tree.body
    )
    helpers = _helpers(tree, module_scope.names)
    found: dict[tuple, Invocation] = {}
    functions = [
        n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for function in functions:
        scope = _Scope(module_scope.names)
        _parametrized(function, scope)
        _bind_statements(function, scope)
        slow = module_slow or _is_slow(function.decorator_list)
        for line, seq in _sequences_in(function, scope, helpers):
            tokens = tuple(t if isinstance(t, str) else None for t in seq)
            if tokens and "--help" not in tokens:
                found.setdefault((line, tokens), Invocation(file, line, tokens, slow))
    return list(found.values())


def resolve(tokens: tuple) -> tuple[str, ...]:
    """The subcommand path the leading known arguments name (stops at the first unknown)."""
    command, path = ROOT, []
    for token in tokens:
        if not isinstance(token, str) or not hasattr(command, "get_command"):
            break
        sub = command.get_command(None, token)
        if sub is None:
            break
        command, path = sub, [*path, token]
    return tuple(path)


def executed_paths() -> dict[tuple[str, ...], list[Invocation]]:
    """Subcommand path -> the test invocations that run it, over tests/**/*.py."""
    paths: dict[tuple[str, ...], list[Invocation]] = {}
    for file in sorted(TESTS.rglob("*.py")):
        source = file.read_text(encoding="utf-8")
        if "attnkit" not in source:
            continue
        for invocation in scan_invocations(source, file.relative_to(REPO).as_posix()):
            path = resolve(invocation.tokens)
            if path:
                paths.setdefault(path, []).append(invocation)
    return paths


def documented_paths(commands=None) -> dict[tuple[str, ...], list[str]]:
    paths: dict[tuple[str, ...], list[str]] = {}
    for doc in DOC_COMMANDS if commands is None else commands:
        path = parse(doc.args).path if not doc.error else ()
        if path:
            paths.setdefault(path, []).append(doc.where)
    return paths


def unrun(documented: dict, executed: dict) -> list[tuple[str, ...]]:
    """The documented paths no test runs (a group counts as run when any of its commands is)."""
    return [p for p in documented if not any(e[: len(p)] == p for e in executed)]


def coverage_table(documented: dict, executed: dict) -> str:
    lines = []
    for path in sorted(documented):
        runs = [i for e, found in executed.items() if e[: len(path)] == path for i in found]
        files = sorted({i.file + (" (slow)" if i.slow else "") for i in runs})
        lines.append(f"  attnkit {' '.join(path)}: {', '.join(files) or 'NOT RUN BY ANY TEST'}")
    return "\n".join(lines)


def test_every_documented_subcommand_is_run_by_a_test():
    documented, executed = documented_paths(), executed_paths()
    missing = unrun(documented, executed)
    assert not missing, (
        "documented subcommands that no test runs:\n"
        + "\n".join(
            f"  attnkit {' '.join(p)} (documented at {', '.join(documented[p][:3])})"
            for p in missing
        )
        + "\nwhat each documented subcommand is run by:\n"
        + coverage_table(documented, executed)
    )


SCANNED = """
import subprocess, sys
import pytest
from typer.testing import CliRunner
from attnkit.cli import app

runner = CliRunner()
CHILD = "from attnkit.cli import app; app()"


def invoke(*args):
    return runner.invoke(app, list(args))


def _run(argv, check=True):
    return runner.invoke(app, argv)


def test_direct(tmp_path):
    runner.invoke(app, ["train", str(tmp_path), "-o", "r"])
    CliRunner().invoke(
        app,
        ["data", "download", "multi30k", "--to", str(tmp_path)],
    )
    runner.invoke(app, ["translate", "--help"])  # help runs nothing


def test_helpers():
    invoke("experiment", "positions", "-o", "x")
    _run(["report", "r"])


def test_variables(tmp_path):
    args = ["faithfulness", str(tmp_path)]
    runner.invoke(app, args)
    both = ["evaluate", "r"] + ["--beam", "1"]
    runner.invoke(app, both)
    for command in ("predict", "classify"):
        runner.invoke(app, [command, "r"])


@pytest.mark.slow
@pytest.mark.parametrize("name, extra", [("rollout", 1), ("deletion", 2)])
def test_parametrized(name, extra):
    runner.invoke(app, [name, "r"])


def test_subprocesses(tmp_path):
    subprocess.run([sys.executable, "-m", "attnkit", "explain", "--example", "two-word"])
    subprocess.run(["attnkit", "align", "score", "--gold", "g", "--pred", "p"])
    subprocess.Popen([sys.executable, "-c", CHILD, "serve", "--demo"])


def test_not_invocations(fixture_args):
    runner.invoke(app, fixture_args)        # unknown: counts for nothing
    words = ["demo", "caption"]             # a list that is never run
    runner.invoke(app, [str(words), "x"])
"""


def test_scan_finds_each_kind_of_invocation():
    found = scan_invocations(SCANNED, "t.py")
    paths = {resolve(i.tokens): i for i in found}
    assert set(paths) - {()} == {
        ("train",),
        ("data", "download"),
        ("experiment", "positions"),
        ("report",),
        ("faithfulness",),
        ("evaluate",),
        ("predict",),
        ("classify",),
        ("rollout",),
        ("deletion",),
        ("explain",),
        ("align", "score"),
        ("serve",),
    }
    assert paths[("rollout",)].slow and not paths[("train",)].slow
    assert paths[("data", "download")].where == "t.py:21"
    assert not any(resolve(i.tokens) in {("translate",), ("demo",), ("caption",)} for i in found)


def test_an_unrun_documented_subcommand_fails_by_name():
    docs = extract_commands(
        "```bash\nattnkit train c.yaml\nattnkit demo -o x\nattnkit data download m --to d\n```\n",
        "page.md",
    )
    executed = {resolve(i.tokens): [i] for i in scan_invocations(SCANNED, "t.py")}
    documented = documented_paths(docs)
    assert unrun(documented, executed) == [("demo",)]
    table = coverage_table(documented, executed)
    assert "attnkit demo: NOT RUN BY ANY TEST" in table and "attnkit train: t.py" in table
