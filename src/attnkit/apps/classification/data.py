"""Labelled text for classification: a TSV reader with named columns, SST-2, a word vocabulary.

- :func:`read_tsv` reads any tab-separated file whose first line names the columns and returns
  one ``dict`` per row; a missing column, a short row, bad UTF-8 or a NUL character is a
  :class:`TSVError` that names the file and the line (and the column where there is one). A
  byte-order mark before the header is removed.
- :func:`read_labelled` picks a text and an integer label column (GLUE SST-2: ``sentence``,
  ``label``; Socher et al. 2013, Wang et al. 2019) into :class:`LabelledText`; a label outside
  ``0 .. num_classes - 1`` is an error naming the file and line.
- :func:`load_sst2` reads ``DATA_DIR/sst2/{train,dev}.tsv``; :func:`load_split` the split a
  config's ``data:`` section names (SST-2, TSV files or generated rationales).
- :class:`WordVocab`: a word-level vocabulary built on the training split, saved as JSON in the
  run directory. Text is lower-cased and split into words and punctuation; every token keeps
  the index of the whitespace word it came from (``word_ids``), so word-level truths (the
  rationales of :mod:`attnkit.apps.classification.rationales`) map onto tokens of any tokenizer.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from attnkit.datadir import default_data_dir
from attnkit.errors import DataError
from attnkit.textfiles import check_paired, decode_text, read_bytes

if TYPE_CHECKING:
    from attnkit.apps.classification.config import TextClassificationConfig

__all__ = [
    "LabelledText",
    "TSVError",
    "WordVocab",
    "default_data_dir",
    "load_split",
    "load_sst2",
    "read_labelled",
    "read_tsv",
    "split_words",
]


class TSVError(DataError):
    """A malformed TSV file; the message names the file and the line."""


@dataclass(frozen=True)
class LabelledText:
    """One example: the text, its integer label and (generated data only) the token positions
    of the true rationale, as indices into ``text.split()``."""

    text: str
    label: int
    rationale: tuple[int, ...] | None = None


def read_tsv(path: str | Path, columns: Sequence[str]) -> list[dict[str, str]]:
    """Rows of a TSV file with a header line, keeping the named ``columns`` (stripped).

    A UTF-8 byte-order mark is removed; lines end at ``\\n`` (a ``\\r`` before it is removed).

    Raises:
        DataError: no such file, or a directory (:mod:`attnkit.textfiles`).
        TSVError: bad UTF-8 or a NUL character (line and column), an empty file, a header with
            no rows after it, a column not in the header, or a row with fewer fields than the
            header (each naming the file and line).
    """
    return [row for _, row in _numbered_rows(Path(path), columns)]


def _numbered_rows(path: Path, columns: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """:func:`read_tsv`'s rows, each with its 1-based line number."""
    data = read_bytes(path)  # a DataError for a missing file or a directory
    try:
        text = decode_text(data, path)
    except DataError as err:  # invalid UTF-8 or a NUL character, with line and column
        raise TSVError(str(err)) from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise TSVError(f"{path}, line 1: empty file, expected a header line")
    header = [name.strip() for name in lines[0].removesuffix("\r").split("\t")]
    missing = [c for c in columns if c not in header]
    if missing:
        raise TSVError(f"{path}, line 1: missing column(s) {missing}; the header has {header}")
    index = {c: header.index(c) for c in columns}
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.removesuffix("\r").split("\t")
        if len(fields) < len(header):
            raise TSVError(
                f"{path}, line {number}: {len(fields)} field(s), the header names "
                f"{len(header)} ({header})"
            )
        rows.append((number, {c: fields[i].strip() for c, i in index.items()}))
    if not rows:
        raise TSVError(
            f"{path}: no rows of data ({len(lines)} line(s) read: the header and "
            f"{len(lines) - 1} blank); an empty split trains or scores nothing"
        )
    return rows


def read_labelled(
    path: str | Path,
    text_column: str = "sentence",
    label_column: str = "label",
    num_classes: int | None = None,
) -> list[LabelledText]:
    """:class:`LabelledText` from a TSV file. A label that is not an integer, or (given
    ``num_classes``) one outside ``0 .. num_classes - 1``, is a :class:`TSVError` naming the
    file and line."""
    out = []
    path = Path(path)
    for number, row in _numbered_rows(path, [text_column, label_column]):
        value = row[label_column]
        try:
            label = int(value)
        except ValueError:
            raise TSVError(
                f"{path}, line {number}: label {value!r} in column '{label_column}' is not an "
                "integer"
            ) from None
        if num_classes is not None and not 0 <= label < num_classes:
            raise TSVError(
                f"{path}, line {number}: label {label} in column '{label_column}' is outside "
                f"0..{num_classes - 1} (num_classes is {num_classes})"
            )
        out.append(LabelledText(row[text_column], label))
    return out


def load_sst2(
    data_dir: str | Path | None, split: str, num_classes: int | None = None
) -> list[LabelledText]:
    """GLUE SST-2 ``train`` or ``dev`` from ``DATA_DIR/sst2/`` (the test split has no labels;
    ``num_classes``: see :func:`read_labelled`)."""
    if split not in ("train", "dev"):
        raise ValueError(
            f"SST-2 split must be 'train' or 'dev' (test is unlabelled), got {split!r}"
        )
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    path = root / "sst2" / f"{split}.tsv"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: SST-2 not found (set ATTNKIT_DATA_DIR or data.data_dir to the folder "
            "holding sst2/)"
        )
    return read_labelled(path, "sentence", "label", num_classes)


def load_split(
    cfg: TextClassificationConfig, split: str, data_dir: str | None = None
) -> list[LabelledText]:
    """The examples of ``split`` (``train``, ``dev`` or ``test``) that ``cfg.data`` names."""
    d = cfg.data
    if d.source == "rationales":
        from attnkit.apps.classification.rationales import generate_rationales

        sizes = dict(zip(("train", "dev", "test"), d.generated_sizes, strict=True))
        if split not in sizes:
            raise ValueError(f"split must be train, dev or test, got {split!r}")
        examples = generate_rationales(split, sizes[split], d.seed)
    elif d.source == "sst2":
        if split == "test":
            raise ValueError("the SST-2 test split is unlabelled; use --split dev")
        examples = load_sst2(data_dir or d.data_dir, split, cfg.num_classes)
    else:
        files = {"train": d.train_file, "dev": d.dev_file, "test": d.test_file}
        if split not in files or not files[split]:
            raise ValueError(f"data.{split}_file is not set in the config")
        examples = read_labelled(files[split], d.text_column, d.label_column, cfg.num_classes)
    bad = [e.label for e in examples if not 0 <= e.label < cfg.num_classes]
    if bad:
        raise ValueError(f"{split}: label {bad[0]} is outside 0..{cfg.num_classes - 1}")
    if split == "train" and d.train_size is not None:
        examples = examples[: d.train_size]
    return examples


_TOKEN = re.compile(r"\w+(?:['’]\w+)*|'\w+|[^\w\s]")


def split_words(text: str) -> tuple[list[str], list[int]]:
    """Lower-cased tokens of ``text`` and, per token, the index of its whitespace word."""
    tokens, word_ids = [], []
    for w, word in enumerate(text.lower().split()):
        pieces = _TOKEN.findall(word) or [word]
        tokens.extend(pieces)
        word_ids.extend([w] * len(pieces))
    return tokens, word_ids


class WordVocab:
    """A word-level vocabulary: ``<pad>`` = 0, ``<unk>`` = 1, ``<cls>`` = 2, then the words of
    the training split by frequency (ties alphabetically), at least ``min_freq`` times, at most
    ``max_size`` in all."""

    SPECIALS = ("<pad>", "<unk>", "<cls>")
    FILE = "vocab.json"
    pad_id, unk_id, cls_id = 0, 1, 2

    def __init__(self, words: Sequence[str]) -> None:
        self.itos = list(words)
        if tuple(self.itos[:3]) != self.SPECIALS:
            raise ValueError(f"a vocabulary must start with {self.SPECIALS}")
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Sequence[str], min_freq: int = 1, max_size: int = 50_000) -> WordVocab:
        counts = Counter(tok for text in texts for tok in split_words(text)[0])
        ranked = sorted(
            (w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w)
        )
        return cls([*cls.SPECIALS, *ranked[: max(0, max_size - len(cls.SPECIALS))]])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(
        self, text: str, max_len: int | None = None
    ) -> tuple[list[int], list[str], list[int]]:
        """``(ids, tokens, word_ids)`` of ``text``, cut to ``max_len`` tokens."""
        tokens, word_ids = split_words(text)
        if max_len is not None:
            tokens, word_ids = tokens[:max_len], word_ids[:max_len]
        return [self.stoi.get(t, self.unk_id) for t in tokens], tokens, word_ids

    def save(self, directory: str | Path) -> Path:
        path = Path(directory) / self.FILE
        path.write_text(json.dumps({"itos": self.itos}, ensure_ascii=False), encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: str | Path) -> WordVocab:
        path = Path(directory) / cls.FILE
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no vocabulary here; is this a run directory?")
        return cls(json.loads(path.read_text(encoding="utf-8"))["itos"])


def own_files(texts: str | Path, labels: str | Path, num_classes: int) -> list[LabelledText]:
    """A user's test set: ``texts`` (one text a line) and ``labels`` (its class, an integer
    in ``0 .. num_classes - 1``, a line). Unequal line counts, an empty file and a bad label
    are :class:`DataError` s naming the file (and line)."""
    lines = [decode_text(read_bytes(p), p).splitlines() for p in (texts, labels)]
    check_paired(*lines, texts, labels, "the texts and their labels")
    out = []
    for number, (text, value) in enumerate(zip(*lines, strict=True), 1):
        if not value.strip().isdigit() or int(value) >= num_classes:
            raise DataError(
                f"{labels}, line {number}: label {value!r} is not a class 0..{num_classes - 1}"
            )
        out.append(LabelledText(text, int(value)))
    return out
