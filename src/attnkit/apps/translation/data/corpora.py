"""Parallel corpora: the types, the readers and the cleaning step.

A :class:`ParallelCorpus` is a name plus splits ``train`` / ``valid`` / ``test``, each a list of
:class:`Pair` (source, target) strings. Readers exist for

- parallel plain-text files, one sentence per line, optionally gzip-compressed
  (:func:`read_parallel`, and :func:`read_plain_corpus` for ``{split}.{lang}`` directories);
- the Multi30k layout ``{root}/task1/raw/{train,val,test_2016_flickr}.{lang}.gz``
  (Elliott et al. 2016, "Multi30K: Multilingual English-German Image Descriptions");
- the manythings.org / Tatoeba exports ``English<TAB>German[<TAB>attribution]`` as ``.txt``
  or ``.zip`` (:func:`read_tatoeba`);
- a generic two-column TSV (:func:`read_tsv`).

Named corpora (``multi30k``, ``tatoeba-eng-deu``, ``default``) resolve from a data directory in
:mod:`attnkit.apps.translation.data.named`
(:func:`~attnkit.apps.translation.data.named.load_corpus`).

Every problem with the input is a :class:`DataError` whose one-line message names the file and,
where there is one, the line: ``train.de, line 17: invalid UTF-8 (byte 0xff at column 4)``.
Empty pairs and over-long pairs are dropped by :func:`clean_pairs` and *counted*: the counts are
logged and kept on the corpus (:attr:`ParallelCorpus.dropped`), never silent.
"""

from __future__ import annotations

import gzip
import logging
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from attnkit.errors import DataError
from attnkit.textfiles import check_file, decode_text, read_bytes, where

log = logging.getLogger(__name__)

SPLITS = ("train", "valid", "test")


class Pair(NamedTuple):
    """One sentence pair. A tuple, so ``src, tgt = pair`` works."""

    src: str
    tgt: str


@dataclass(frozen=True)
class DropCounts:
    """How many pairs :func:`clean_pairs` kept and why it dropped the others."""

    kept: int = 0
    empty: int = 0
    too_long: int = 0


@dataclass
class ParallelCorpus:
    """A named corpus with ``splits["train" | "valid" | "test"]`` lists of :class:`Pair`."""

    name: str
    splits: dict[str, list[Pair]]
    src_lang: str = "src"
    tgt_lang: str = "tgt"
    dropped: dict[str, DropCounts] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # split -> the file(s) it was read from

    def __post_init__(self) -> None:
        unknown = set(self.splits) - set(SPLITS)
        if unknown:
            raise ValueError(f"unknown split(s) {sorted(unknown)}; use {', '.join(SPLITS)}")

    def __getitem__(self, split: str) -> list[Pair]:
        if split not in self.splits:
            raise KeyError(f"corpus {self.name!r} has no split {split!r} (has {list(self.splits)})")
        return self.splits[split]

    @property
    def train(self) -> list[Pair]:
        return self["train"]

    @property
    def valid(self) -> list[Pair]:
        return self["valid"]

    @property
    def test(self) -> list[Pair]:
        return self["test"]

    def swapped(self) -> ParallelCorpus:
        """The same corpus in the other direction (target becomes source)."""
        splits = {k: [Pair(p.tgt, p.src) for p in v] for k, v in self.splits.items()}
        return replace(self, splits=splits, src_lang=self.tgt_lang, tgt_lang=self.src_lang)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{k}={len(v)}" for k, v in self.splits.items())
        return f"ParallelCorpus({self.name!r}, {self.src_lang}-{self.tgt_lang}, {sizes})"


# --------------------------------------------------------------------------- reading text


def decode_lines(data: bytes, source: object) -> list[str]:
    """Decode UTF-8 ``data`` into lines (split on ``\\n`` only, ``\\r`` and a BOM removed).

    Splitting on ``\\n`` alone matters: :meth:`str.splitlines` also breaks at U+2028, U+0085 and
    other separators that occur inside real sentences, which would misalign parallel files.
    Invalid UTF-8 and NUL characters are errors naming the line and column
    (:func:`attnkit.textfiles.decode_text`).
    """
    lines = decode_text(data, source).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.removesuffix("\r") for ln in lines]


def read_lines(path: str | Path) -> list[str]:
    """All lines of a UTF-8 text file, transparently gunzipping ``*.gz``."""
    path = check_file(path)
    if path.suffix != ".gz":
        return decode_lines(read_bytes(path), path)
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError) as err:
        raise DataError(f"{path}: not a readable gzip file ({err})") from None
    return decode_lines(data, path)


def read_parallel(src_path: str | Path, tgt_path: str | Path) -> list[Pair]:
    """Pairs from two line-aligned files; different line counts are an error naming both."""
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        raise DataError(
            f"{src_path} has {len(src)} lines but {tgt_path} has {len(tgt)} lines "
            f"(line {min(len(src), len(tgt)) + 1} has no partner); "
            "parallel files must align line by line"
        )
    return [Pair(s.strip(), t.strip()) for s, t in zip(src, tgt, strict=True)]


def _split_columns(lines: Iterable[str], source: object, allowed: tuple[int, ...]) -> list[Pair]:
    pairs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            pairs.append(Pair("", ""))  # an empty pair: counted later by clean_pairs
            continue
        columns = line.split("\t")
        if len(columns) not in allowed:
            what = "no tab" if len(columns) == 1 else f"{len(columns)} tab-separated columns"
            want = " or ".join(str(n) for n in allowed)
            raise DataError(f"{where(source, number)}: found {what}, expected {want} columns")
        pairs.append(Pair(columns[0].strip(), columns[1].strip()))
    return pairs


def read_tsv(path: str | Path) -> list[Pair]:
    """A generic ``source<TAB>target`` file (exactly two columns per non-blank line)."""
    return _split_columns(read_lines(path), path, allowed=(2,))


def read_tatoeba(path: str | Path, member: str | None = None) -> list[Pair]:
    """A manythings.org Anki export, ``English<TAB>other[<TAB>attribution]``, ``.txt`` or ``.zip``.

    Returns (English, other-language) pairs in file order; the attribution column is ignored.
    In a zip the one ``*.txt`` member that is not ``_about.txt`` is read unless ``member`` is given.
    """
    path = Path(path)
    if path.suffix != ".zip":
        return _split_columns(read_lines(path), path, allowed=(2, 3))
    check_file(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith(".txt") and "_about" not in n]
            if member is None:
                if len(names) != 1:
                    raise DataError(f"{path}: expected one sentence file in the zip, got {names}")
                member = names[0]
            data = archive.read(member)
    except (zipfile.BadZipFile, KeyError) as err:
        raise DataError(f"{path}: cannot read the zip ({err})") from None
    source = f"{path}!{member}"
    return _split_columns(decode_lines(data, source), source, allowed=(2, 3))


# --------------------------------------------------------------------------- corpora on disk

MULTI30K_SPLITS = {"train": "train", "valid": "val", "test": "test_2016_flickr"}


def read_multi30k(root: str | Path, src_lang: str = "de", tgt_lang: str = "en") -> ParallelCorpus:
    """Multi30k task 1, ``{root}/task1/raw/{split}.{lang}.gz``: train 29000, val 1014, test 1000."""
    raw = Path(root) / "task1" / "raw"
    files = {
        ours: (raw / f"{theirs}.{src_lang}.gz", raw / f"{theirs}.{tgt_lang}.gz")
        for ours, theirs in MULTI30K_SPLITS.items()
    }
    splits = {split: read_parallel(*pair) for split, pair in files.items()}
    name = f"multi30k-{src_lang}-{tgt_lang}"
    return ParallelCorpus(name, splits, src_lang, tgt_lang, sources=_sources(files))


def _sources(files: dict[str, tuple[Path, Path]]) -> dict[str, str]:
    return {split: f"{src} and {tgt}" for split, (src, tgt) in files.items()}


def _plain_file(directory: Path, split: str, lang: str) -> Path:
    for name in (f"{split}.{lang}", f"{split}.{lang}.gz"):
        if (directory / name).exists():
            return check_file(directory / name)
    raise DataError(f"{directory / f'{split}.{lang}'}: file not found (nor with .gz)")


def read_plain_corpus(directory: str | Path, src_lang: str, tgt_lang: str) -> ParallelCorpus:
    """``{directory}/{train,valid,test}.{lang}[.gz]`` (the layout :func:`write_corpus` writes)."""
    directory = Path(directory)
    files = {
        s: (_plain_file(directory, s, src_lang), _plain_file(directory, s, tgt_lang))
        for s in SPLITS
    }
    splits = {split: read_parallel(*pair) for split, pair in files.items()}
    return ParallelCorpus(directory.name, splits, src_lang, tgt_lang, sources=_sources(files))


def write_corpus(corpus: ParallelCorpus, directory: str | Path) -> list[Path]:
    """Write ``{directory}/{split}.{lang}`` plain-text files; returns the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for split, pairs in corpus.splits.items():
        for lang, side in ((corpus.src_lang, 0), (corpus.tgt_lang, 1)):
            path = directory / f"{split}.{lang}"
            if any("\n" in p[side] for p in pairs):
                raise DataError(f"{path}: a sentence contains a newline; cannot write one per line")
            path.write_text("".join(p[side] + "\n" for p in pairs), encoding="utf-8")
            written.append(path)
    return written
