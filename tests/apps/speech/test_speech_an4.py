"""CMU AN4's Sphinx cepstra (sphinxbase feat.c's format: an int32 count, then float32 values,
13 a frame) against files written by hand, and the real data's split as its SOURCE.md gives it
(948 / 130 utterances, 253,682 / 35,570 frames)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from attnkit.apps.speech.an4 import read_an4, read_mfc, vocabulary
from attnkit.datadir import default_data_dir
from attnkit.errors import DataError

AN4 = default_data_dir() / "an4-mfcc"


def _write(path: Path, values: list[float], header: int | None = None, order: str = ">") -> Path:
    count = len(values) if header is None else header
    path.write_bytes(
        struct.pack(f"{order}i", count) + struct.pack(f"{order}{len(values)}f", *values)
    )
    return path


def test_reads_big_endian_frames_in_order(tmp_path):
    values = [float(i) / 4 for i in range(26)]
    cepstra = read_mfc(_write(tmp_path / "a.mfc", values))
    assert cepstra.dtype == np.float32 and cepstra.shape == (2, 13)
    np.testing.assert_array_equal(cepstra[0], values[:13])  # frame-major, c0 first
    np.testing.assert_array_equal(cepstra[1], values[13:])


def test_little_endian_file_reads_the_same(tmp_path):
    values = [1.5, -2.25, 3.0] * 13
    big = read_mfc(_write(tmp_path / "big.mfc", values))
    little = read_mfc(_write(tmp_path / "little.mfc", values, order="<"))
    np.testing.assert_array_equal(big, little)
    assert big.shape == (3, 13)


def test_empty_count_is_zero_frames(tmp_path):
    assert read_mfc(_write(tmp_path / "e.mfc", [])).shape == (0, 13)


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("short.mfc", b"\x00\x00", "truncated"),
        ("odd.mfc", struct.pack(">i", 13) + b"\x00" * 51, "truncated"),
        ("cut.mfc", struct.pack(">i", 26) + struct.pack(">25f", *range(25)), "header says 26"),
        ("long.mfc", struct.pack(">i", 13) + struct.pack(">26f", *range(26)), "holds 26"),
        ("ragged.mfc", struct.pack(">i", 14) + struct.pack(">14f", *range(14)), "13-coefficient"),
        (
            "nan.mfc",
            struct.pack(">i", 13) + struct.pack(">13f", *([0.0] * 12 + [np.nan])),
            "finite",
        ),
    ],
)
def test_bad_files_name_the_file(tmp_path, name, data, says):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(DataError, match=says) as err:
        read_mfc(path)
    message = str(err.value)
    assert message.startswith(str(path)) and "\n" not in message


def test_missing_file_names_it(tmp_path):
    with pytest.raises(DataError, match="not found") as err:
        read_mfc(tmp_path / "none.mfc")
    assert str(tmp_path / "none.mfc") in str(err.value)


def _tree(root: Path, lines: list[str], fileids: list[str], present: list[str]) -> Path:
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "an4_train.transcription").write_text("\n".join(lines) + "\n")
    (root / "etc" / "an4_train.fileids").write_text("\n".join(fileids) + "\n")
    for fileid in present:
        (root / "feat" / fileid).parent.mkdir(parents=True, exist_ok=True)
        _write(root / "feat" / f"{fileid}.mfc", [0.0] * 13)
    return root


def test_transcripts_pair_with_feature_files(tmp_path):
    ids = ["an4_clstk/fash/an251-fash-b", "an4_clstk/fash/an253-fash-b"]
    lines = ["<s> YES </s> (an251-fash-b)", "RUBOUT G M (an253-fash-b)"]
    utterances = read_an4(_tree(tmp_path, lines, ids, ids), "train")
    assert [u.uid for u in utterances] == ["an251-fash-b", "an253-fash-b"]
    assert [u.words for u in utterances] == [("YES",), ("RUBOUT", "G", "M")]
    assert utterances[1].features == tmp_path / "feat" / f"{ids[1]}.mfc"
    assert vocabulary(utterances) == ["G", "M", "RUBOUT", "YES"]


def test_transcript_line_without_feature_file_names_file_and_line(tmp_path):
    ids = ["an4_clstk/fash/an251-fash-b", "an4_clstk/fash/an253-fash-b"]
    root = _tree(tmp_path, ["YES (an251-fash-b)", "GO (an253-fash-b)"], ids, ids[:1])
    transcripts = root / "etc" / "an4_train.transcription"
    with pytest.raises(DataError, match="no feature file for utterance an253-fash-b") as err:
        read_an4(root, "train")
    assert str(err.value).startswith(f"{transcripts}, line 2:")


@pytest.mark.parametrize(
    ("lines", "ids", "says"),
    [
        (["YES an251-fash-b"], ["a/an251-fash-b"], "line 1: expected 'WORDS"),
        (["<s> </s> (an251-fash-b)"], ["a/an251-fash-b"], "line 1: utterance an251-fash-b has no"),
        (["YES (an251-fash-b)"], ["a/an999-fash-b"], "line 1: utterance an251-fash-b, but"),
        (["YES (an251-fash-b)", "GO (x)"], ["a/an251-fash-b"], "2 utterances and"),
    ],
)
def test_malformed_transcripts_name_the_file(tmp_path, lines, ids, says):
    root = _tree(tmp_path, lines, ids, ids)
    with pytest.raises(DataError, match=says) as err:
        read_an4(root, "train")
    assert str(err.value).startswith(str(root / "etc" / "an4_train.transcription"))


@pytest.mark.skipif(not AN4.is_dir(), reason=f"AN4 not found at {AN4}")
def test_real_an4_split_and_frames():
    train, test = read_an4(AN4, "train"), read_an4(AN4, "test")
    assert (len(train), len(test)) == (948, 130)  # the standard split (SOURCE.md)
    assert train[0].uid == "an251-fash-b" and train[0].words == ("YES",)
    assert test[0].text == "RUBOUT G M E F THREE NINE"
    assert sum(len(u.words) for u in train) == 5442 and sum(len(u.words) for u in test) == 773
    shapes = [read_mfc(u.features).shape for u in train + test]
    assert all(n > 0 and d == 13 for n, d in shapes)
    assert sum(n for n, _ in shapes[:948]) == 253_682  # 0.70 h at 100 frames a second
    assert sum(n for n, _ in shapes[948:]) == 35_570
    assert len(vocabulary(train + test)) == 101  # an4.dic: 130 lines, alternates included
