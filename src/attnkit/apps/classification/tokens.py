"""Tokenizers for the text classifiers, with one interface, and padding into batches.

- :class:`WordTokenizer`: the word-level :class:`~attnkit.apps.classification.data.WordVocab`
  built on the training split (``vocab.json`` in the run directory), for the RNN and the
  Transformer trained from scratch.
- :class:`WordPieceTokenizer`: BERT's WordPiece (Wu et al. 2016; Devlin et al. 2019 §3) through
  the ``tokenizers`` library, from the ``vocab.txt`` that ships with the pretrained weights
  (copied into the run directory as ``wordpiece-vocab.txt``).

``encode`` returns :class:`Encoded`: the content ids (no special tokens; the models add theirs),
the token strings and, per token, the index of the whitespace word it belongs to.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from attnkit.apps.classification.data import WordVocab


@dataclass(frozen=True)
class Encoded:
    ids: list[int]
    tokens: list[str]
    word_ids: list[int]

    def without(self, position: int) -> Encoded:
        """The same text with the token at ``position`` erased."""
        keep = [i for i in range(len(self.ids)) if i != position]
        return Encoded(
            [self.ids[i] for i in keep],
            [self.tokens[i] for i in keep],
            [self.word_ids[i] for i in keep],
        )


class WordTokenizer:
    kind = "word"

    def __init__(self, vocab: WordVocab, max_len: int = 64) -> None:
        self.vocab, self.max_len = vocab, max_len
        self.pad_id, self.cls_id = vocab.pad_id, vocab.cls_id

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode(self, texts: Sequence[str]) -> list[Encoded]:
        return [Encoded(*self.vocab.encode(t, self.max_len)) for t in texts]

    def save(self, directory: Path) -> None:
        self.vocab.save(directory)

    @classmethod
    def load(cls, directory: Path, max_len: int) -> WordTokenizer:
        return cls(WordVocab.load(directory), max_len)


class WordPieceTokenizer:
    kind = "wordpiece"
    FILE = "wordpiece-vocab.txt"

    def __init__(self, vocab_file: str | Path, max_len: int = 64, lowercase: bool = True) -> None:
        from tokenizers import BertWordPieceTokenizer

        self.vocab_file, self.max_len = Path(vocab_file), max_len
        if not self.vocab_file.is_file():
            raise FileNotFoundError(f"{self.vocab_file}: WordPiece vocabulary not found")
        self.tok = BertWordPieceTokenizer(str(self.vocab_file), lowercase=lowercase)
        self.pad_id = self.tok.token_to_id("[PAD]")
        self.cls_id = self.tok.token_to_id("[CLS]")
        self.sep_id = self.tok.token_to_id("[SEP]")

    @property
    def vocab_size(self) -> int:
        return self.tok.get_vocab_size()

    def encode(self, texts: Sequence[str]) -> list[Encoded]:
        out = []
        for text, enc in zip(
            texts, self.tok.encode_batch(list(texts), add_special_tokens=False), strict=True
        ):
            starts = _word_starts(text)
            word_ids = [_word_at(starts, start) for start, _ in enc.offsets]
            n = self.max_len
            out.append(Encoded(list(enc.ids[:n]), list(enc.tokens[:n]), word_ids[:n]))
        return out

    def save(self, directory: Path) -> None:
        shutil.copyfile(self.vocab_file, Path(directory) / self.FILE)

    @classmethod
    def load(cls, directory: Path, max_len: int) -> WordPieceTokenizer:
        return cls(Path(directory) / cls.FILE, max_len)


def _word_starts(text: str) -> list[int]:
    """Character offsets where each whitespace-separated word starts."""
    starts, prev_space = [], True
    for i, ch in enumerate(text):
        if not ch.isspace() and prev_space:
            starts.append(i)
        prev_space = ch.isspace()
    return starts


def _word_at(starts: list[int], offset: int) -> int:
    import bisect

    return max(0, bisect.bisect_right(starts, offset) - 1)


def pad_batch(items: Sequence[Encoded], pad_id: int, device=None) -> tuple[Tensor, Tensor]:
    """``ids (B, T)`` padded with ``pad_id`` and ``keep (B, T)``, True at real tokens. An empty
    text keeps one padding token (masked) so every row has a width."""
    width = max(1, max(len(e.ids) for e in items))
    ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    keep = torch.zeros((len(items), width), dtype=torch.bool)
    for row, e in enumerate(items):
        ids[row, : len(e.ids)] = torch.tensor(e.ids, dtype=torch.long)
        keep[row, : len(e.ids)] = True
    return ids.to(device), keep.to(device)
