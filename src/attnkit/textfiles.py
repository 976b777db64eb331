"""Reading a user's text file strictly, for every reader of attnkit (parallel text, TSV, CSV).

:func:`read_text` checks the path (a missing file and a directory are told apart), reads the
bytes and hands them to :func:`decode_text`, which

- removes one UTF-8 byte-order mark at the start (spreadsheet exports write one);
- refuses invalid UTF-8, naming the line, the column and the byte:
  ``train.de, line 17: invalid UTF-8 (byte 0xff at column 4)``;
- refuses a NUL character (a binary file, or a file in UTF-16), naming the line and column.

Lines and columns count from 1; a line ends at ``\\n`` only, and a column counts characters.
Every error is a :class:`~attnkit.errors.DataError` whose one-line message starts with the file.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from attnkit.errors import DataError

BOM = b"\xef\xbb\xbf"


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


def check_paired(first: list, second: list, a: str | Path, b: str | Path, what: str) -> None:
    """Two files read line by line must pair up (inputs and their references): unequal
    counts, or nothing at all, are a :class:`DataError` naming the files; ``what`` says what
    the lines are ("the source and reference files")."""
    if len(first) != len(second):
        raise DataError(
            f"{a} has {len(first)} lines and {b} {len(second)}: {what} must pair up line by line"
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
