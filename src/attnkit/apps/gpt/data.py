"""The text a character-level GPT reads: a vocabulary of its characters, the text as token ids,
split into a training and a validation part, and random blocks of it (as nanoGPT's
``get_batch``: ``x`` a block of ``T`` characters, ``y`` the same block one character later).

The vocabulary is the sorted set of the text's characters (nanoGPT's ``prepare.py``: 65 for
Tiny Shakespeare), so ids are comparable with nanoGPT's. A character outside it is an error
that names it.

Source ``repeated`` (induction heads, Olsson et al. 2022) has no text: each row is ``half``
uniform random tokens followed by the same ``half`` again, drawn from a seed; its vocabulary is
``vocab_size`` fixed symbols (:func:`symbol_vocab`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from attnkit.apps.gpt.config import GPTDataConfig
from attnkit.datadir import default_data_dir
from attnkit.errors import DataError
from attnkit.textfiles import read_text


@dataclass(frozen=True)
class CharVocab:
    """Characters <-> ids: ``chars[i]`` is id ``i``."""

    chars: str

    @classmethod
    def of(cls, text: str) -> CharVocab:
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str, what: str = "the text") -> list[int]:
        """Ids of ``text``; a character the vocabulary lacks is a ``ValueError`` naming it."""
        index = {c: i for i, c in enumerate(self.chars)}
        missing = sorted({c for c in text if c not in index})
        if missing:
            shown = ", ".join(repr(c) for c in missing[:5])
            raise ValueError(
                f"{what} holds {len(missing)} character(s) the model never saw ({shown}); "
                f"its vocabulary is {len(self)} characters"
            )
        return [index[c] for c in text]

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"chars": self.chars}, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> CharVocab:
        return cls(json.loads(path.read_text(encoding="utf-8"))["chars"])


@dataclass
class Corpus:
    """The text as ids, its two parts and its vocabulary."""

    vocab: CharVocab
    train: Tensor  # (N_train,) int64
    valid: Tensor  # (N_valid,) int64
    source: Path


def text_path(cfg: GPTDataConfig) -> Path:
    """The file the config names."""
    if cfg.source == "text":
        return Path(cfg.path)
    root = Path(cfg.data_dir) if cfg.data_dir is not None else default_data_dir()
    return root / "tinyshakespeare" / "input.txt"


def read_corpus(cfg: GPTDataConfig, vocab: CharVocab | None = None) -> Corpus:
    """The config's text, split at ``train_share``; both parts must hold more than one block
    (``block_size + 1`` characters), else a :class:`DataError` names the file and the sizes.
    Source ``repeated``: :func:`repeated_corpus` (``vocab`` unused: its symbols are fixed)."""
    if cfg.source == "repeated":
        return repeated_corpus(cfg, VALID_ROWS)
    path = text_path(cfg)
    text = read_text(path)
    vocab = vocab or CharVocab.of(text)
    ids = torch.tensor(vocab.encode(text, str(path)), dtype=torch.long)  # (N,)
    n = int(cfg.train_share * len(ids))
    train, valid = ids[:n], ids[n:]
    need = cfg.block_size + 1
    if len(train) < need or len(valid) < need:
        raise DataError(
            f"{path}: {len(ids)} characters give {len(train)} for training and {len(valid)} "
            f"for validation; each needs more than block_size ({cfg.block_size})"
        )
    return Corpus(vocab, train, valid, path)


def block_starts(n: int, block: int, count: int, generator: torch.Generator) -> Tensor:
    """``count`` random start offsets of ``block + 1`` characters in a text of ``n``."""
    return torch.randint(n - block, (count,), generator=generator)  # (count,)


def blocks(ids: Tensor, starts: Tensor, block: int) -> tuple[Tensor, Tensor]:
    """Inputs ``x (B, T)`` and targets ``y (B, T)`` (``x`` shifted by one) at ``starts``."""
    rows = starts[:, None] + torch.arange(block + 1)  # (B, T + 1)
    chunk = ids[rows]  # (B, T + 1)
    return chunk[:, :-1], chunk[:, 1:]


# -- source repeated: random tokens, repeated (induction heads, Olsson et al. 2022) ---------
SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&*+-/<=>?@^~"
VALID_SEED, TRAIN_SAMPLE_SEED = 0, 1  # the fixed validation rows; a fixed sample of training's
VALID_ROWS = 512  # rows of each


def symbol_vocab(size: int) -> CharVocab:
    """``size`` printable symbols standing for the random tokens (past the ASCII ones:
    Latin-1 letters and on), so a run saves, shows and generates them as characters."""
    extra = "".join(chr(0xC0 + i) for i in range(max(0, size - len(SYMBOLS))))
    return CharVocab((SYMBOLS + extra)[:size])


def repeated_rows(
    count: int,
    half: int,
    vocab_size: int,
    generator: torch.Generator,
    min_period: int | None = None,
) -> Tensor:
    """``count`` rows ``(count, 2 * half + 1)``: ``half`` uniform random tokens, the same
    ``half`` again, and the first once more (the periodic sequence, so the last target
    continues it): inputs ``row[:-1]``, targets ``row[1:]``. With ``min_period``, each row's
    period is drawn from ``min_period .. half`` (its first tokens repeated as often as fit)."""
    first = torch.randint(vocab_size, (count, half), generator=generator)  # (N, half)
    where = torch.arange(2 * half + 1)  # (T + 1,)
    if min_period is None:
        return first[:, where % half]  # (N, T + 1)
    period = torch.randint(min_period, half + 1, (count, 1), generator=generator)  # (N, 1)
    return first.gather(1, where[None, :] % period)  # (N, T + 1)


def repeated_corpus(cfg: GPTDataConfig, rows: int) -> Corpus:
    """The ``repeated`` source as a corpus: ``rows`` fixed validation rows (and as many of
    training's), each row's ``block_size + 1`` tokens laid end to end ``(rows * (T + 1),)``."""
    made = {}
    for name, seed in (("valid", VALID_SEED), ("train", TRAIN_SAMPLE_SEED)):
        g = torch.Generator().manual_seed(seed)
        made[name] = repeated_rows(rows, cfg.half, cfg.vocab_size, g).flatten()  # (N * (T + 1),)
    source = Path(f"repeated:{cfg.vocab_size}-tokens-half-{cfg.half}")
    return Corpus(symbol_vocab(cfg.vocab_size), made["train"], made["valid"], source)
