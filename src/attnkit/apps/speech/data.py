"""The utterances of a speech run as features and transcripts, and their output vocabulary.

A split is a :class:`SpeechSet`: per utterance its name, its features ``(frames, F)`` and its
transcript. Features are normalised per utterance (each band to zero mean and unit variance
over the utterance's frames, "per-utterance CMVN"), so no statistics are kept with a run and a
user's own wav reads exactly as the training data did.

The output tokens (:class:`Vocabulary`): for FSDD the ten digits, one token each (a string
``"7 7 3"`` is three tokens; the digit error rate is then the WER of the tokens); for AN4
the characters of the words with ``" "`` between words (``units: chars``) or the words
themselves (``units: words``). Index 0 is padding, which is also CTC's blank
(:class:`~attnkit.apps.speech.model.SpeechModel`); then BOS, EOS and UNK.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnkit.apps.speech.config import SpeechDataConfig
from attnkit.datadir import default_data_dir
from attnkit.errors import DataError

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")
DIGITS = tuple("0123456789")
SPLITS = {"fsdd": ("train", "valid", "test", "test-long"), "an4": ("train", "valid", "test")}


@dataclass
class SpeechSet:
    """Utterances: ``names``, ``features`` float32 ``(frames, F)`` each, ``texts``; for FSDD
    digit strings also ``spans``: each digit's ``[first, last + 1)`` frames (gold alignment)."""

    names: list[str] = field(default_factory=list)
    features: list[np.ndarray] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    spans: list[list[tuple[int, int]]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.names)


class Vocabulary:
    """Output tokens: the specials, then ``tokens``; ``units`` says how text splits."""

    def __init__(self, tokens: list[str], units: str) -> None:
        self.itos = [*SPECIALS, *tokens]
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.units = units  # digits, chars or words

    def __len__(self) -> int:
        return len(self.itos)

    def split(self, text: str) -> list[str]:
        return list(text) if self.units == "chars" else text.split()

    def join(self, tokens: list[str]) -> str:
        return "".join(tokens) if self.units == "chars" else " ".join(tokens)

    def encode(self, text: str) -> list[int]:
        """BOS, the ids of ``text``'s tokens, EOS."""
        return [BOS, *(self.stoi.get(t, UNK) for t in self.split(text)), EOS]

    def decode(self, ids: list[int]) -> list[str]:
        return [self.itos[i] for i in ids if i >= len(SPECIALS) or i == UNK]

    @classmethod
    def build(cls, data: SpeechDataConfig, texts: list[str]) -> Vocabulary:
        if data.source == "fsdd":
            return cls(list(DIGITS), "digits")
        units = data.units
        tokens = {t for text in texts for t in (list(text) if units == "chars" else text.split())}
        return cls(sorted(tokens), units)

    def save(self, path: Path) -> None:
        tokens = self.itos[len(SPECIALS) :]
        path.write_text(json.dumps({"units": self.units, "tokens": tokens}), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Vocabulary:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(found["tokens"], found["units"])


def normalise(features: np.ndarray) -> np.ndarray:
    """Per-utterance CMVN: each band of ``(frames, F)`` to zero mean and unit variance."""
    mean = features.mean(0, keepdims=True)
    std = features.std(0, keepdims=True)
    return ((features - mean) / np.maximum(std, 1e-5)).astype(np.float32)  # (frames, F)


def _root(data: SpeechDataConfig) -> Path:
    return Path(data.data_dir) if data.data_dir is not None else default_data_dir()


def _fsdd(data: SpeechDataConfig, split: str) -> SpeechSet:
    from attnkit.apps.speech.alignment import frame_spans
    from attnkit.apps.speech.audio import frame_sizes, log_mel
    from attnkit.apps.speech.digits import SAMPLE_RATE, digit_strings

    n_train, n_valid, n_test = data.counts
    where = {
        "train": ("train", n_train, data.train_lengths, data.seed),
        "valid": ("train", n_valid, data.train_lengths, data.seed + 1),  # other combinations
        "test": ("test", n_test, data.test_lengths, data.seed),
        "test-long": ("test", n_test, data.long_lengths, data.seed),
    }[split]
    source, count, lengths, seed = where
    strings = digit_strings(source, count, tuple(lengths), seed, _root(data) / "fsdd/recordings")
    out = SpeechSet()
    for i, s in enumerate(strings):
        out.names.append(f"{split}-{i}-{s.speaker}")
        out.features.append(normalise(log_mel(s.waveform, SAMPLE_RATE, data.n_mels)))
        out.texts.append(s.text)
        out.spans.append(frame_spans(s.bounds, frame_sizes(SAMPLE_RATE)[1]))
    return out


def _an4(data: SpeechDataConfig, split: str) -> SpeechSet:
    from attnkit.apps.speech.an4 import read_an4, read_mfc

    utterances = read_an4(_root(data) / "an4-mfcc", "test" if split == "test" else "train")
    if split != "test":
        cut = len(utterances) - data.valid_utterances
        utterances = utterances[:cut] if split == "train" else utterances[cut:]
    if data.limit is not None:
        utterances = utterances[: data.limit]
    out = SpeechSet()
    for u in utterances:
        out.names.append(u.uid)
        out.features.append(normalise(read_mfc(u.features)))
        out.texts.append(u.text)
    return out


def load_split(data: SpeechDataConfig, split: str) -> SpeechSet:
    """The utterances of ``split`` (:data:`SPLITS` per source; module docstring)."""
    if split not in SPLITS[data.source]:
        raise ValueError(
            f"{data.source} has splits {', '.join(SPLITS[data.source])}, not {split!r}"
        )
    found = _fsdd(data, split) if data.source == "fsdd" else _an4(data, split)
    if split == "train" and not len(found):
        raise DataError(f"no training utterances in {data.source} (check data.counts/limit)")
    return found
