"""Digit strings from FSDD recordings: the README's split (0-4 test, 5-49 train), labels kept,
each source's samples in order with silence between, the same speaker throughout, repeated
digits on purpose, and a pure function of (split, count, lengths, seed). Run on a small FSDD
written here, and on the real one when ../shared/data has it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from attnkit.apps.speech.audio import read_wav
from attnkit.apps.speech.digits import (
    SAMPLE_RATE,
    digit_strings,
    fsdd_dir,
    fsdd_recordings,
    split_of,
)
from attnkit.errors import DataError

SPEAKERS = ("ann", "bob")


@pytest.fixture(scope="module")
def fake(tmp_path_factory) -> Path:
    """2 speakers x 10 digits x indices 0-7, each a distinct nonzero noise burst."""
    root = tmp_path_factory.mktemp("fsdd")
    rng = np.random.default_rng(0)
    for speaker in SPEAKERS:
        for digit in range(10):
            for index in range(8):
                n = int(rng.integers(300, 900))
                wave = rng.uniform(0.05, 0.5, n) * rng.choice([-1, 1], n)
                soundfile.write(root / f"{digit}_{speaker}_{index}.wav", wave, SAMPLE_RATE)
    return root


def test_split_rule():
    assert [split_of(i) for i in (0, 4, 5, 49)] == ["test", "test", "train", "train"]


def test_recordings_by_split(fake):
    test, train = fsdd_recordings("test", fake), fsdd_recordings("train", fake)
    assert len(test) == 2 * 10 * 5 and len(train) == 2 * 10 * 3
    assert {r.index for r in test} == set(range(5)) and {r.index for r in train} == {5, 6, 7}
    assert test[0].path.name == "0_ann_0.wav" and test[0].speaker == "ann"


def _has_run(digits: list[int]) -> bool:
    """Whether a digit follows itself somewhere ("7 7")."""
    return any(a == b for a, b in zip(digits, digits[1:], strict=False))


def _label(path: Path) -> int:
    return int(path.name.split("_")[0])


@pytest.mark.parametrize(("split", "lengths"), [("train", (1, 3)), ("test", (5, 7))])
def test_strings_keep_labels_and_samples_in_order(fake, split, lengths):
    strings = digit_strings(split, 25, lengths, seed=1, root=fake)
    for s in strings:
        assert lengths[0] <= len(s.digits) <= lengths[1] and s.waveform.dtype == np.float32
        assert [_label(p) for p in s.sources] == s.digits  # the label is what was spoken
        assert {p.name.split("_")[1] for p in s.sources} == {s.speaker}  # one speaker
        assert {split_of(int(p.stem.split("_")[2])) for p in s.sources} == {split}
        at = 0
        for path, (start, end) in zip(s.sources, s.bounds, strict=True):
            silence = s.waveform[at:start]
            assert not silence.any() and (at == 0 or 400 <= start - at <= 1600)  # 50-200 ms
            np.testing.assert_array_equal(s.waveform[start:end], read_wav(path, SAMPLE_RATE))
            at = end
        assert at == len(s.waveform)  # nothing after the last recording
        assert s.text == " ".join(map(str, s.digits))


def test_long_test_strings_repeat_digits_from_different_recordings(fake):
    strings = digit_strings("test", 30, (5, 7), seed=0, root=fake)
    runs = [s for s in strings if _has_run(s.digits)]
    assert runs, "no 5-7 test string repeats a digit"
    for s in strings:
        for digit in set(s.digits):
            paths = [p for p, d in zip(s.sources, s.digits, strict=True) if d == digit]
            assert len(set(paths)) == len(paths)  # a repeat is another recording (5 per digit)


def test_runs_come_on_purpose(fake):
    always = digit_strings("train", 20, (3, 3), seed=2, root=fake, run_share=1.0)
    assert all(_has_run(s.digits) for s in always)


def test_pure_function_of_its_arguments(fake):
    first = digit_strings("test", 6, (1, 3), seed=4, root=fake)
    again = digit_strings("test", 6, (1, 3), seed=4, root=fake)
    prefix = digit_strings("test", 3, (1, 3), seed=4, root=fake)
    other = digit_strings("test", 6, (1, 3), seed=5, root=fake)
    for a, b in zip(first, again, strict=True):
        assert a.digits == b.digits and np.array_equal(a.waveform, b.waveform)
    assert [s.digits for s in prefix] == [s.digits for s in first[:3]]
    assert [s.digits for s in other] != [s.digits for s in first]


def test_bad_arguments_and_folders(fake, tmp_path):
    with pytest.raises(ValueError, match="split"):
        digit_strings("valid", 1, root=fake)
    with pytest.raises(ValueError, match="lengths"):
        digit_strings("train", 1, (3, 1), root=fake)
    with pytest.raises(DataError, match="no FSDD recordings of the test split"):
        fsdd_recordings("test", tmp_path)
    (tmp_path / "hello.wav").write_bytes(b"")
    with pytest.raises(DataError, match="not an FSDD name") as err:
        fsdd_recordings("train", tmp_path)
    assert str(err.value).startswith(str(tmp_path / "hello.wav"))


@pytest.mark.skipif(not fsdd_dir().is_dir(), reason=f"FSDD not found at {fsdd_dir()}")
def test_real_fsdd_split_and_strings():
    train, test = fsdd_recordings("train"), fsdd_recordings("test")
    assert (len(train), len(test)) == (2700, 300)  # the README's split
    assert len({r.speaker for r in test}) == 6
    strings = digit_strings("test", 12, (5, 7), seed=0)
    assert any(_has_run(s.digits) for s in strings)
    s = strings[0]
    start, end = s.bounds[0]
    np.testing.assert_array_equal(s.waveform[start:end], read_wav(s.sources[0], SAMPLE_RATE))
