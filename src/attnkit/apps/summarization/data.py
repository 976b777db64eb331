"""SciTLDR-A papers, the tokenizer, the vocabulary and the pointer-generator's extended vocabulary.

**Files** (:func:`read_papers`): SciTLDR's JSON Lines (Cachola et al. 2020; the shared data
folder's ``scitldr/SOURCE.md``), one paper a line: ``source`` (the abstract's sentences, a list
of strings), ``target`` (its TLDRs: one in train, 1-4 in dev and test, the author's first) and
``paper_id``; other keys (``title``, ``source_labels``, ``rouge_scores``) are ignored. Blank
lines are skipped. Every error is a :class:`~attnkit.errors.DataError` of one line naming the
file and the line: text that is not JSON, a line that is not an object, a missing ``source`` or
``target``, a ``source`` that is not a list of strings (a single string is one sentence) or has
no non-blank sentence, a ``target`` that is not a string or a list of strings, an empty target
list or a blank target, and a file with no paper.

**Tokens** (:func:`tokenize`): lowercase, then words and punctuation apart. A word is a run of
letters and digits, joined across a single ``-``, ``'`` or ``.`` that has a letter or digit on
both sides, so ``state-of-the-art``, ``don't``, ``3.5`` and ``e.g`` stay one token while a
sentence's final full stop is its own token; every other non-space character (``,``, ``(``,
``$``, ``\\``, ``_``) is a token by itself; ``1,000`` is three tokens.

**Vocabulary** (:class:`Vocabulary`): ``<pad>`` = 0, ``<unk>`` = 1, ``<s>`` = 2, ``</s>`` = 3,
then the training words by falling count (ties by the word, so the order is reproducible).

**Extended vocabulary** (See, Liu & Manning 2017, §2.2): the pointer can copy a source word the
vocabulary lacks. :func:`extend` gives the ``k``-th distinct such word (in order of first
appearance, counting from 0) the id ``len(vocab) + k``; :func:`encode_target` gives a target
word that is one of those source OOVs the same id and any other unknown target word ``<unk>``,
and :func:`decode_extended` maps ids back to words.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from attnkit.datadir import default_data_dir
from attnkit.errors import DataError
from attnkit.textfiles import read_text, where

SCITLDR = Path("scitldr") / "SciTLDR-A"  # under the shared data folder; see its SOURCE.md
SPLITS = {"train": "train.jsonl", "valid": "dev.jsonl", "test": "test.jsonl"}
SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")  # the words of ids 0-3
PAD, UNK, BOS, EOS = range(4)  # their ids
_WORD = r"[^\W_]+(?:[-'.][^\W_]+)*"  # letters/digits, joined by one - ' or . inside
_TOKEN = re.compile(rf"{_WORD}|[^\w\s]|_")


@dataclass(frozen=True)
class Paper:
    """One SciTLDR paper: its abstract's sentences as in the file and its reference TLDRs."""

    paper_id: str
    source: list[str]  # the abstract, one sentence each
    targets: list[str]  # the TLDRs, the author's first where there is one

    @property
    def abstract(self) -> str:
        """The abstract as one text: the sentences joined by single spaces."""
        return " ".join(self.source)


def _strings(value, field: str, at: str) -> list[str]:
    """``value`` as a list of strings (a single string is a list of one), or a DataError."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{at}: {field!r} must be a string or a list of strings")
    return list(value)


def _paper(record, at: str, number: int) -> Paper:
    """A :class:`Paper` from one decoded JSON line, or a DataError naming ``at``."""
    if not isinstance(record, dict):
        raise DataError(f"{at}: expected a JSON object, got {type(record).__name__}")
    for key in ("source", "target"):
        if key not in record:
            raise DataError(f"{at}: no {key!r} key (a paper needs 'source' and 'target')")
    source = _strings(record["source"], "source", at)
    if not any(sentence.strip() for sentence in source):
        raise DataError(f"{at}: an empty abstract ('source' has no non-blank sentence)")
    targets = _strings(record["target"], "target", at)
    if not targets:
        raise DataError(f"{at}: an empty 'target' list, expected at least one TLDR")
    if not all(target.strip() for target in targets):
        raise DataError(f"{at}: a blank TLDR in 'target'")
    paper_id = record.get("paper_id", f"line-{number}")
    return Paper(str(paper_id), source, targets)


def read_papers(path: str | Path) -> list[Paper]:
    """The papers of a SciTLDR JSON Lines file (module docstring), in file order."""
    path = Path(path)
    papers = []
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        at = where(path, number)
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{at}: not valid JSON ({err.msg} at column {err.colno})") from None
        papers.append(_paper(record, at, number))
    if not papers:
        raise DataError(f"{path}: an empty file, expected one JSON paper a line")
    return papers


def scitldr_path(split: str = "train", data_dir: str | Path | None = None) -> Path:
    """SciTLDR-A's file for ``split`` ("train", "valid" = ``dev.jsonl``, "test") in the shared
    data folder (:func:`attnkit.datadir.default_data_dir` unless ``data_dir`` is given)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    root = Path(data_dir if data_dir is not None else default_data_dir())
    return root / SCITLDR / SPLITS[split]


def load_split(split: str = "train", data_dir: str | Path | None = None) -> list[Paper]:
    """The papers of one SciTLDR-A split: :func:`read_papers` of :func:`scitldr_path`."""
    return read_papers(scitldr_path(split, data_dir))


def tokenize(text: str) -> list[str]:
    """Lowercased word and punctuation tokens (module docstring): "Get 3.5x, e.g. BLEU."
    -> ``["get", "3.5x", ",", "e.g", ".", "bleu", "."]``."""
    return _TOKEN.findall(text.lower())


class Vocabulary:
    """Words and ids: the four specials (ids 0-3, module docstring), then ``words`` in order."""

    def __init__(self, words: Sequence[str] = ()):
        self.words = [*SPECIALS, *words]  # id -> word
        self.ids = {word: i for i, word in enumerate(self.words)}  # word -> id
        if len(self.ids) != len(self.words):
            repeated = sorted(w for w, n in Counter(self.words).items() if n > 1)
            raise DataError(f"vocabulary: repeated words {repeated[:5]} (a special, or twice)")

    @classmethod
    def build(
        cls, token_lists: Iterable[Sequence[str]], min_count: int = 1, max_size: int | None = None
    ) -> Vocabulary:
        """The words seen at least ``min_count`` times in ``token_lists``, most frequent first
        (ties by the word), at most ``max_size`` entries in all, the four specials included."""
        if min_count < 1:
            raise ValueError(f"min_count must be >= 1, got {min_count}")
        if max_size is not None and max_size < len(SPECIALS):
            raise ValueError(f"max_size must be >= {len(SPECIALS)} (the specials), got {max_size}")
        counts = Counter(token for tokens in token_lists for token in tokens)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        words = [w for w, n in ranked if n >= min_count and w not in SPECIALS]
        room = None if max_size is None else max_size - len(SPECIALS)
        return cls(words[:room])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.ids

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Each token's id, ``<unk>`` (1) for a word outside the vocabulary."""
        return [self.ids.get(token, UNK) for token in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Each id's word; an id outside ``0 .. len - 1`` is a ValueError."""
        out = []
        for i in ids:
            if not 0 <= int(i) < len(self.words):
                raise ValueError(f"id {i} is outside the vocabulary (0..{len(self.words) - 1})")
            out.append(self.words[int(i)])
        return out

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as JSON to ``path`` (a run's ``vocab.json``), atomically."""
        from attnkit.engine.checkpoint import write_text  # torch: imported only to save

        write_text(Path(path), json.dumps(self.to_dict(), ensure_ascii=False, indent=0))

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        """The vocabulary :meth:`save` wrote; a damaged file is a DataError naming it."""
        try:
            data = json.loads(read_text(path))
        except json.JSONDecodeError as err:
            raise DataError(f"{where(path, err.lineno)}: not valid JSON ({err.msg})") from None
        try:
            return cls.from_dict(data)
        except DataError as err:
            raise DataError(f"{path}: {err}") from None

    def to_dict(self) -> dict:
        """A JSON-ready form: ``{"specials": [...], "words": [...]}`` (words after them)."""
        return {"specials": list(SPECIALS), "words": self.words[len(SPECIALS) :]}

    @classmethod
    def from_dict(cls, data: dict) -> Vocabulary:
        """The vocabulary :meth:`to_dict` wrote; other specials or words are a DataError."""
        if not isinstance(data, dict) or list(data.get("specials", ())) != list(SPECIALS):
            raise DataError(f"vocabulary: expected the specials {list(SPECIALS)} first")
        words = data.get("words")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise DataError("vocabulary: 'words' must be a list of strings")
        return cls(words)


def extend(tokens: Sequence[str], vocab: Vocabulary) -> tuple[list[int], list[str]]:
    """A source's ids over the extended vocabulary (See et al. 2017, §2.2) and its OOV words:
    the ``k``-th distinct word outside ``vocab`` (first appearance) gets ``len(vocab) + k``."""
    ids, oovs, slot = [], [], {}
    for token in tokens:
        if token in vocab:
            ids.append(vocab.ids[token])
            continue
        if token not in slot:
            slot[token] = len(vocab) + len(oovs)
            oovs.append(token)
        ids.append(slot[token])
    return ids, oovs


def encode_target(tokens: Sequence[str], vocab: Vocabulary, oovs: Sequence[str]) -> list[int]:
    """A target's ids for the copy loss: a vocabulary word's id; a word outside the vocabulary
    that the source has (one of ``oovs``) its extended id; any other word ``<unk>``."""
    slot = {word: len(vocab) + k for k, word in enumerate(oovs)}
    return [vocab.ids.get(token, slot.get(token, UNK)) for token in tokens]


def decode_extended(ids: Iterable[int], vocab: Vocabulary, oovs: Sequence[str]) -> list[str]:
    """Words for ids over the extended vocabulary: ``len(vocab) + k`` is ``oovs[k]``; an id
    beyond the source's OOVs is a ValueError."""
    out = []
    for i in map(int, ids):
        if 0 <= i < len(vocab):
            out.append(vocab.words[i])
        elif 0 <= i - len(vocab) < len(oovs):
            out.append(oovs[i - len(vocab)])
        else:
            raise ValueError(
                f"id {i} is outside the extended vocabulary ({len(vocab)} words + "
                f"{len(oovs)} source OOVs)"
            )
    return out
