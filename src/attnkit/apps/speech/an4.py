"""CMU AN4 ("census") as the Sphinx tutorial ships it: 13 cepstra every 10 ms, word transcripts.

The data (``../shared/data/an4-mfcc``, its SOURCE.md; Acero 1993) has no audio: the features
are the input. Layout::

    etc/an4_train.transcription   "YES (an251-fash-b)": words, then the utterance id
    etc/an4_train.fileids         "an4_clstk/fash/an251-fash-b": the same utterances, in order
    feat/an4_clstk/fash/an251-fash-b.mfc
    (and an4_test.* with feat/an4test_clstk/: the standard split, 948 train / 130 test)

A ``.mfc`` file is Sphinx's cepstra format (CMU sphinxbase ``feat.c``, ``feat_s2mfc_read``): a
4-byte int32 header holding the number of float32 values ``N``, then ``N`` float32 values,
``frames x 13`` cepstral coefficients (c0..c12). The files here are big-endian; sphinxbase
tells the byte order by whether the header matches the file's length, and so does
:func:`read_mfc` (a little-endian file reads the same).

Errors are one line starting with the file (:class:`DataError`): a truncated file, a header
that disagrees with the length, a count not divisible by 13, values that are not finite, and in
the transcripts a malformed line or one whose feature file is missing, with the line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnkit.errors import DataError
from attnkit.textfiles import read_bytes, read_text, where

CEPSTRA = 13  # c0..c12 (the data's README: "number of cepstral coefficients: 13")
FRAME_RATE = 100  # frames per second
SPLITS = ("train", "test")
_LINE = re.compile(r"^(?P<words>.*?)\s*\((?P<uid>[^()\s]+)\)\s*$")
_MARKERS = {"<s>", "</s>", "<sil>"}  # Sphinx sentence and silence markers, not words


def read_mfc(path: str | Path) -> np.ndarray:
    """The cepstra of a Sphinx ``.mfc`` file as float32 ``(frames, 13)`` (module docstring).

    Raises:
        DataError: naming the file, for a file shorter than its header, a header that matches
            the file's length in neither byte order, a count not divisible by 13, or a value
            that is not finite.
    """
    path = Path(path)
    data = read_bytes(path)
    if len(data) < 4 or len(data) % 4:
        raise DataError(
            f"{path}: truncated Sphinx cepstra file ({len(data)} bytes; expected a 4-byte "
            "header and 4-byte floats)"
        )
    values = (len(data) - 4) // 4
    order = next((o for o in (">", "<") if int(np.frombuffer(data, f"{o}i4", 1)[0]) == values), "")
    if not order:
        header = int(np.frombuffer(data, ">i4", 1)[0])
        raise DataError(
            f"{path}: truncated or corrupt Sphinx cepstra file: the header says {header} "
            f"values, the file holds {values}"
        )
    if values % CEPSTRA:
        raise DataError(
            f"{path}: {values} values is not a whole number of {CEPSTRA}-coefficient frames"
        )
    cepstra = np.frombuffer(data, f"{order}f4", offset=4).astype(np.float32)
    cepstra = cepstra.reshape(-1, CEPSTRA)  # (frames, 13)
    if not np.isfinite(cepstra).all():
        frame = int(np.flatnonzero(~np.isfinite(cepstra).all(axis=1))[0])
        raise DataError(f"{path}: a value that is not finite in frame {frame}")
    return cepstra


@dataclass(frozen=True)
class Utterance:
    """One AN4 utterance: its id, its feature file and its words (upper case, as AN4 has them)."""

    uid: str
    features: Path
    words: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _numbered(path: Path) -> list[tuple[int, str]]:
    """The non-blank lines of a text file with their 1-based line numbers."""
    lines = read_text(path).split("\n")
    return [(n, line.strip()) for n, line in enumerate(lines, 1) if line.strip()]


def _transcript(path: Path, number: int, line: str) -> tuple[str, tuple[str, ...]]:
    """``(uid, words)`` of one transcript line ``WORDS (uid)``."""
    match = _LINE.match(line)
    if match is None:
        raise DataError(f"{where(path, number)}: expected 'WORDS (utterance-id)', got {line!r}")
    words = tuple(w for w in match["words"].split() if w.lower() not in _MARKERS)
    if not words:
        raise DataError(f"{where(path, number)}: utterance {match['uid']} has no words")
    return match["uid"], words


def read_an4(root: str | Path, split: str) -> list[Utterance]:
    """The utterances of AN4's ``split`` ("train": 948, "test": 130), in the transcript's order.

    Pairs ``etc/an4_{split}.transcription`` with ``etc/an4_{split}.fileids`` line by line; the
    feature file of each is ``feat/{fileid}.mfc`` (checked to exist, not read: see
    :func:`read_mfc`).

    Raises:
        DataError: naming the file and line, for a malformed transcript line, transcript and
            file-id lists of different lengths or ids, or a missing feature file.
    """
    if split not in SPLITS:
        raise ValueError(f"AN4 split must be one of {', '.join(SPLITS)}, got {split!r}")
    root = Path(root)
    transcripts = root / "etc" / f"an4_{split}.transcription"
    fileids = root / "etc" / f"an4_{split}.fileids"
    lines, ids = _numbered(transcripts), _numbered(fileids)
    if len(lines) != len(ids):
        raise DataError(
            f"{transcripts} has {len(lines)} utterances and {fileids} {len(ids)}: they must "
            "pair up line by line"
        )
    utterances = []
    for (number, line), (id_number, fileid) in zip(lines, ids, strict=True):
        uid, words = _transcript(transcripts, number, line)
        if Path(fileid).name != uid:
            raise DataError(
                f"{where(transcripts, number)}: utterance {uid}, but {where(fileids, id_number)} "
                f"names {fileid}"
            )
        features = root / "feat" / f"{fileid}.mfc"
        if not features.is_file():
            raise DataError(
                f"{where(transcripts, number)}: no feature file for utterance {uid} ({features})"
            )
        utterances.append(Utterance(uid, features, words))
    return utterances


def vocabulary(utterances: list[Utterance]) -> list[str]:
    """The distinct words of ``utterances``, sorted."""
    return sorted({word for u in utterances for word in u.words})
