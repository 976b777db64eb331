"""Spoken digit strings made from real recordings of the Free Spoken Digit Dataset (FSDD).

FSDD (``../shared/data/fsdd``, its SOURCE.md; Jackson et al., CC BY-SA 4.0): 3,000 mono 8 kHz
wavs named ``{digit}_{speaker}_{index}.wav``, 6 speakers x 10 digits x 50. Its README's split:
"Recordings numbered 0-4 (inclusive) are in the test and 5-49 are in the training set" (300 and
2,700 files; every speaker is in both, so the test is not speaker-independent).

A digit string is one speaker's recordings of its digits joined in order with a random short
silence (zeros, 50-200 ms by default) between each two: the connected-digit task of Chorowski
et al. 2015 ("Attention-Based Models for Speech Recognition") in miniature, with the lengths
chosen so that strings longer than those trained on (5-7 digits against 1-3) and repeated
digits ("7 7 7") test whether attention keeps its place (their §4-5: location-aware attention
generalises to longer and repetitive utterances where content-only attention fails).

:func:`digit_strings` is a pure function of ``(split, count, lengths, seed)`` (and the
folder): string ``i`` is drawn from its own generator seeded by ``(seed, split, lengths, i)``,
so the first ``k`` of ``count`` strings are the ``k`` strings of ``count = k``. A string
repeats a digit on purpose with probability ``run_share``: a run of 2-3 copies of one digit
(each copy a different recording where the split has enough), besides the repeats that uniform
digits give by chance.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnkit.apps.speech.audio import read_wav
from attnkit.datadir import default_data_dir
from attnkit.errors import DataError

SAMPLE_RATE = 8000  # Hz, every FSDD recording
TEST_INDICES = range(0, 5)  # the README's test split; 5-49 train
SPLITS = {"train": 1, "test": 2}  # split -> its code in the seed
_NAME = re.compile(r"^(?P<digit>\d)_(?P<speaker>[A-Za-z]+)_(?P<index>\d+)\.wav$")


@dataclass(frozen=True)
class Recording:
    """One FSDD file with what its name says."""

    path: Path
    digit: int
    speaker: str
    index: int

    @property
    def split(self) -> str:
        return split_of(self.index)


@dataclass
class DigitString:
    """A concatenated utterance: ``waveform`` float32 ``(samples,)`` at 8 kHz, its ``digits``,
    the ``speaker``, the source files in order and each one's ``[start, end)`` in samples."""

    waveform: np.ndarray
    digits: list[int]
    speaker: str
    sources: list[Path] = field(default_factory=list)
    bounds: list[tuple[int, int]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The label as digits separated by spaces, e.g. ``"7 7 7"``."""
        return " ".join(str(d) for d in self.digits)


def split_of(index: int) -> str:
    """FSDD's standard split of recording ``index``: 0-4 test, 5-49 train."""
    return "test" if index in TEST_INDICES else "train"


def fsdd_dir() -> Path:
    """``fsdd/recordings`` in the shared data folder (:func:`attnkit.datadir.default_data_dir`)."""
    return default_data_dir() / "fsdd" / "recordings"


def fsdd_recordings(split: str, root: str | Path | None = None) -> list[Recording]:
    """The recordings of ``split`` ("train" or "test") in ``root`` (default :func:`fsdd_dir`),
    sorted by speaker, digit and index. A wav not named ``{digit}_{speaker}_{index}.wav`` is a
    :class:`DataError` naming it; a folder without recordings of the split is one too."""
    if split not in SPLITS:
        raise ValueError(f"FSDD split must be one of {', '.join(SPLITS)}, got {split!r}")
    root = Path(root) if root is not None else fsdd_dir()
    if not root.is_dir():
        raise DataError(f"{root}: no such folder (the FSDD recordings)")
    found = []
    for path in root.glob("*.wav"):
        match = _NAME.match(path.name)
        if match is None:
            raise DataError(
                f"{path}: not an FSDD name, expected {{digit}}_{{speaker}}_{{index}}.wav"
            )
        recording = Recording(path, int(match["digit"]), match["speaker"], int(match["index"]))
        if recording.split == split:
            found.append(recording)
    if not found:
        raise DataError(f"{root}: no FSDD recordings of the {split} split")
    return sorted(found, key=lambda r: (r.speaker, r.digit, r.index))


def _digits(rng: np.random.Generator, length: int, run_share: float) -> list[int]:
    """``length`` uniform digits; with probability ``run_share`` one of them is repeated as a
    run of 2-3 (at most ``length``) at a random place."""
    digits = [int(d) for d in rng.integers(0, 10, size=length)]
    if length >= 2 and rng.random() < run_share:
        run = int(rng.integers(2, min(3, length) + 1))
        start = int(rng.integers(0, length - run + 1))
        digits[start : start + run] = [digits[start]] * run
    return digits


def _pick(rng: np.random.Generator, digits: list[int], pools: dict[int, list]) -> list:
    """One recording per digit from ``pools[digit]``, different recordings for the copies of a
    repeated digit while the pool has enough."""
    chosen: list = [None] * len(digits)
    for digit in sorted(set(digits)):
        places = [i for i, d in enumerate(digits) if d == digit]
        pool = pools[digit]
        picks = rng.choice(len(pool), size=len(places), replace=len(places) > len(pool))
        for place, pick in zip(places, picks, strict=True):
            chosen[place] = pool[int(pick)]
    return chosen


def _join(waves: list[np.ndarray], gaps: list[int]) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """``waves`` joined with ``gaps[i]`` zeros before wave ``i + 1``: ``(samples,)`` and each
    wave's ``[start, end)``."""
    pieces, bounds, at = [], [], 0
    for i, wave in enumerate(waves):
        if i:
            pieces.append(np.zeros(gaps[i - 1], dtype=np.float32))
            at += gaps[i - 1]
        pieces.append(wave)
        bounds.append((at, at + len(wave)))
        at += len(wave)
    return np.concatenate(pieces), bounds  # (samples,)


def _check(split: str, count: int, lengths: tuple[int, int], silence_ms, run_share) -> None:
    if split not in SPLITS:
        raise ValueError(f"FSDD split must be one of {', '.join(SPLITS)}, got {split!r}")
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    low, high = lengths
    if not 1 <= low <= high:
        raise ValueError(f"lengths must be [low, high] with 1 <= low <= high, got {lengths}")
    if not 0 <= silence_ms[0] <= silence_ms[1]:
        raise ValueError(f"silence_ms must be [low, high] with 0 <= low <= high, got {silence_ms}")
    if not 0.0 <= run_share <= 1.0:
        raise ValueError(f"run_share must lie in [0, 1], got {run_share}")


def digit_strings(
    split: str,
    count: int,
    lengths: tuple[int, int] = (1, 3),
    seed: int = 0,
    root: str | Path | None = None,
    silence_ms: tuple[float, float] = (50.0, 200.0),
    run_share: float = 0.3,
) -> list[DigitString]:
    """``count`` digit strings of ``split``'s recordings (module docstring).

    Args:
        split: "train" (recordings 5-49) or "test" (0-4).
        count: how many strings.
        lengths: ``[low, high]`` digits per string, uniform (1-3 to train; 1-3 and 5-7 to test).
        seed: the strings are a pure function of ``(split, count, lengths, seed)``.
        root: the folder of FSDD wavs (default :func:`fsdd_dir`).
        silence_ms: ``[low, high]`` of the uniform silence between two recordings.
        run_share: the probability that a string of 2 or more holds a run of one digit.
    Returns:
        The strings; each waveform is float32 ``(samples,)`` at 8 kHz.
    """
    _check(split, count, tuple(lengths), tuple(silence_ms), run_share)
    by_speaker: dict[str, dict[int, list[Recording]]] = defaultdict(lambda: defaultdict(list))
    for recording in fsdd_recordings(split, root):
        by_speaker[recording.speaker][recording.digit].append(recording)
    speakers = sorted(by_speaker)
    low, high = (int(n) for n in lengths)
    gap = [round(ms * SAMPLE_RATE / 1000) for ms in silence_ms]  # samples
    waves: dict[Path, np.ndarray] = {}  # each file read once per call
    strings = []
    for i in range(count):
        rng = np.random.default_rng([seed, SPLITS[split], low, high, i])
        speaker = speakers[int(rng.integers(len(speakers)))]
        digits = _digits(rng, int(rng.integers(low, high + 1)), run_share)
        missing = sorted(set(digits) - set(by_speaker[speaker]))
        if missing:
            raise DataError(
                f"{root or fsdd_dir()}: no {split} recording of {missing[0]} by {speaker}"
            )
        chosen = _pick(rng, digits, by_speaker[speaker])
        gaps = [int(g) for g in rng.integers(gap[0], gap[1] + 1, size=len(digits) - 1)]
        for r in chosen:
            if r.path not in waves:
                waves[r.path] = read_wav(r.path, SAMPLE_RATE)
        waveform, bounds = _join([waves[r.path] for r in chosen], gaps)
        strings.append(DigitString(waveform, digits, speaker, [r.path for r in chosen], bounds))
    return strings
