"""Reading a user's text file strictly, for every reader of attnkit (parallel text, TSV, CSV).

:func:`read_text` checks the path (a missing file and a directory are told apart), reads the
bytes and hands them to :func:`decode_text`, which

- removes one UTF-8 byte-order mark at the start (spreadsheet exports write one);
- refuses invalid UTF-8, naming the line, the column and the byte:
  ``train.de, line 17: invalid UTF-8 (byte 0xff at column 4)``;
- refuses a NUL character (a binary file, or a file in UTF-16), naming the line and column.

Lines and columns count from 1; a line ends at ``\\n`` only, and a column counts characters.
Every error is a :class:`~attnkit.errors.DataError` whose one-line message starts with the file.

A user's own test set (``attnkit evaluate RUN --src INPUTS --ref REFERENCES``) is read by
:func:`list_files` (a folder of input files sorted by name, or a text file listing them one a
line, relative to its folder), :func:`reference_lines` (one reference a line) and
:func:`read_listed` (a listed file's error names the list's line); :func:`check_paired` checks
that the two pair up.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from attnkit.errors import DataError

BOM = b"\xef\xbb\xbf"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
T = TypeVar("T")


def where(source: object, line: int | None = None, column: int | str | None = None) -> str:
    """``SOURCE``, ``SOURCE, line N`` or ``SOURCE, line N, column C`` (a name is quoted)."""
    text = str(source)
    if line is not None:
        text += f", line {line}"
    if column is not None:
        text += f", column {column!r}" if isinstance(column, str) else f", column {column}"
    return text


def check_file(path: str | Path) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it names a file; a :class:`DataError` if it is
    missing or is a directory."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a directory, expected a file")
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    return path


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file; a missing file, a directory or a read error is a :class:`DataError`."""
    path = check_file(path)
    try:
        return path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot read ({err.strerror or err})") from None


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file, checked by :func:`decode_text`."""
    path = Path(path)
    return decode_text(read_bytes(path), path)


def check_paired(
    first: list,
    second: list,
    a: str | Path,
    b: str | Path,
    what: str,
    units: tuple[str, str] = ("lines", "lines"),
) -> None:
    """Two files read line by line must pair up (inputs and their references): unequal
    counts, or nothing at all, are a :class:`DataError` naming the files; ``what`` says what
    the lines are ("the source and reference files"); ``units`` what ``a`` and ``b`` count
    (a folder of "images" beside a file of "lines", say)."""
    if len(first) != len(second):
        one, two = units
        more = "" if one == two else f" {two}"
        raise DataError(
            f"{a} has {len(first)} {one} and {b} {len(second)}{more}: {what} must pair up "
            + ("line by line" if units == ("lines", "lines") else "one to one, in order")
        )
    if not first:
        raise DataError(f"{a}: an empty file, nothing to score")


def _line_and_column(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and character column of byte ``offset`` (all bytes before it decode)."""
    start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def decode_text(data: bytes, source: object) -> str:
    """UTF-8 ``data`` as text without its byte-order mark; invalid UTF-8 or a NUL character is
    a :class:`DataError` naming ``source``, the line and the column."""
    data = data.removeprefix(BOM)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line, column = _line_and_column(data, err.start)
        bad = data[err.start : err.start + 1].hex()
        raise DataError(
            f"{where(source, line)}: invalid UTF-8 (byte 0x{bad} at column {column})"
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        column = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise DataError(
            f"{where(source, line, column)}: NUL character (a binary file, or not UTF-8 but "
            "UTF-16?)"
        )
    return text


def read_csv_records(
    path: str | Path, error: type[DataError] = DataError, *, skip_blank: bool = False
) -> list[tuple[int, list[str]]]:
    """The CSV records of ``path`` (read by :func:`read_text`), each with the line it starts
    on. A field beyond the :mod:`csv` module's limit (usually an unclosed quote) or another
    ``csv.Error`` is an ``error`` naming that line; ``skip_blank`` drops records whose fields
    are all blank. ``error`` (a :class:`DataError` subclass) also replaces read_text's errors."""
    try:
        text = read_text(path)
    except DataError as err:
        raise err if isinstance(err, error) else error(str(err)) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    records = []
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return records
        except csv.Error as err:
            hint = " (an unclosed quote?)" if "field limit" in str(err) else ""
            raise error(f"{where(path, start)}: {err}{hint}") from None
        if not skip_blank or any(cell.strip() for cell in row):
            records.append((start, row))


# -- a user's own test files: inputs (a folder, or a list of paths) and a reference a line ----


@dataclass(frozen=True)
class Listed:
    """One input file of a user's test set: its ``path``, and ``where`` a list file named it
    (``list.txt, line 3``); None for a file found in a folder."""

    path: Path
    where: str | None = None


def natural_key(name: str) -> list:
    """Sort key putting ``2`` before ``10``: digit runs compare as numbers."""
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)
    ]


def text_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 file (:func:`read_text`), split at ``\\n`` only, a final line end
    ending the last line (not starting an empty one), each line's ``\\r`` removed."""
    lines = read_text(path).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def reference_lines(path: str | Path, what: str = "reference") -> list[str]:
    """One ``what`` a line, each stripped; a blank line is a :class:`DataError` naming it."""
    lines = [line.strip() for line in text_lines(path)]
    for number, line in enumerate(lines, 1):
        if not line:
            raise DataError(f"{where(path, number)}: an empty line, expected one {what} a line")
    return lines


def list_files(
    source: str | Path, suffixes: Sequence[str] = IMAGE_SUFFIXES, what: str = "image"
) -> list[Listed]:
    """The input files of ``source``: a folder's files ending in one of ``suffixes``, sorted
    by name (``2.png`` before ``10.png``), or the lines of a text file, each a path relative to
    that file's folder (or absolute). A missing source, a folder without such files, a blank
    line and a listed file that is not there are :class:`DataError` s naming the file (and
    line)."""
    source = Path(source)
    if source.is_dir():
        found = [p for p in source.iterdir() if p.is_file() and p.suffix.lower() in suffixes]
        if not found:
            kinds = ", ".join(f"*{s}" for s in suffixes)
            raise DataError(f"{source}: no {what} files ({kinds}) in this folder")
        return [Listed(p) for p in sorted(found, key=lambda p: natural_key(p.name))]
    if not source.exists():
        raise DataError(f"{source}: not found (a folder of {what}s, or a file listing them)")
    if source.suffix.lower() in suffixes:
        raise DataError(f"{source}: one {what}; give a folder of {what}s or a file listing them")
    listed = []
    for number, line in enumerate(text_lines(source), 1):
        at, name = where(source, number), line.strip()
        if not name:
            raise DataError(f"{at}: an empty line, expected the path of one {what} a line")
        path = Path(name) if Path(name).is_absolute() else source.parent / name
        if not path.is_file():
            missing = "is a directory" if path.is_dir() else f"no such {what} file"
            raise DataError(f"{at}: {path}: {missing}")
        listed.append(Listed(path, at))
    return listed


def read_listed(files: Sequence[Listed], read: Callable[[Path], T]) -> list[T]:
    """``read`` of each file; its error (a ``ValueError``) for a listed file starts with the
    list's file and line: ``list.txt, line 3: images/a.png: cannot read this image``."""
    out = []
    for file in files:
        try:
            out.append(read(file.path))
        except ValueError as err:
            if file.where is None:
                raise
            raise DataError(f"{file.where}: {err}") from None
    return out


def paired_files(
    src: str | Path, ref: str | Path, what: str, suffixes: Sequence[str] = IMAGE_SUFFIXES
) -> tuple[list[Listed], list[str]]:
    """A user's test set: the images of ``src`` (:func:`list_files`) and one ``what`` (a
    "class name", a "caption") a line of ``ref`` (:func:`reference_lines`), checked to pair up
    (:func:`check_paired`: unequal counts, or nothing, name both files)."""
    files, references = list_files(src, suffixes), reference_lines(ref, what)
    units = ("images" if Path(src).is_dir() else "lines", "lines")
    check_paired(files, references, src, ref, f"the images and their {what}s", units)
    return files, references
