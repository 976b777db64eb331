"""The fuzz suite's round-two inputs (issue 35): damaged PNG files, among them headers that
declare a decompression bomb, through every application's image reader; and damaged pairs of
a user's own test files (``evaluate --src FILE --ref FILE``) through the translation and
classification readers. Every read either succeeds or raises one-line
:class:`~attnkit.errors.DataError` that names the file; any other exception fails the test."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from attnkit.apps.captioning.inference import read_image as caption_image
from attnkit.apps.classification.data import own_files as labelled_texts
from attnkit.apps.im2latex.image_files import read_image as formula_image
from attnkit.apps.segmentation.data import read_png
from attnkit.apps.translation.decode.evaluate import own_files as parallel_texts
from attnkit.apps.vision.data import read_image as vision_image
from attnkit.errors import DataError
from fuzz_counts import record
from test_fuzz_readers import EDITS, FUZZ, damage

READERS = {
    "segmentation PNG": read_png,
    "im2latex image": formula_image,
    "vision image": lambda p: vision_image(p, 8, 1),
    "captioning image": lambda p: caption_image(p, 8),
}


def png(width: int = 12, height: int = 10, declared: tuple[int, int] | None = None) -> bytes:
    """A small grey PNG; with ``declared``, its header claims that size (CRC made valid, so
    Pillow reads the header and meets the size before any pixel)."""
    buffer = io.BytesIO()
    Image.fromarray(np.arange(width * height, dtype=np.uint8).reshape(height, width)).save(
        buffer, "PNG"
    )
    data = buffer.getvalue()
    if declared is not None:
        ihdr = bytearray(data[12:29])  # b"IHDR" + 13 bytes of header data
        ihdr[4:12] = struct.pack(">II", *declared)
        crc = struct.pack(">I", zlib.crc32(bytes(ihdr)) & 0xFFFFFFFF)
        data = data[:12] + bytes(ihdr) + crc + data[33:]
    return data


def _expect_named(read, path, target: str) -> None:
    try:
        read()
    except DataError as err:
        assert str(path) in str(err) and "\n" not in str(err), str(err)
        record(target, "DataError, file named")
        return
    record(target, "read")


def test_a_declared_decompression_bomb_is_named_by_every_reader(tmp_path):
    path = tmp_path / "bomb.png"
    path.write_bytes(png(declared=(30000, 30000)))
    for target, read in READERS.items():
        try:
            read(path)
        except DataError as err:
            assert str(err).startswith(str(path)) and "too large" in str(err), (target, err)
        else:
            raise AssertionError(f"{target} read a 30000 x 30000 declaration")


@FUZZ
@given(
    edits=EDITS,
    declared=st.none() | st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1)),
    target=st.sampled_from(sorted(READERS)),
)
def test_damaged_png_files(tmp_path_factory, edits, declared, target):
    path = tmp_path_factory.mktemp("png") / "image.png"
    path.write_bytes(damage(png(declared=declared), edits))
    _expect_named(lambda: READERS[target](path), path, target)


@FUZZ
@given(src=EDITS, ref=EDITS, classifier=st.booleans())
def test_own_test_files(tmp_path_factory, src, ref, classifier):
    root = tmp_path_factory.mktemp("own")
    inputs, references = root / "test.src", root / "test.ref"
    inputs.write_bytes(damage(b"a small house\nthe cat sleeps\n", src))
    labels = b"0\n1\n" if classifier else b"ein kleines Haus\ndie Katze schl\xc3\xa4ft\n"
    references.write_bytes(damage(labels, ref))
    if classifier:
        read = lambda: labelled_texts(inputs, references, 2)  # noqa: E731
    else:
        read = lambda: parallel_texts(inputs, references)  # noqa: E731
    try:
        read()
        record("own test files", "read")
    except DataError as err:
        message = str(err)
        assert (str(inputs) in message or str(references) in message) and "\n" not in message
        record("own test files", "DataError, file named")


def test_a_png_with_a_broken_chunk_is_named_by_every_reader(tmp_path):
    """Found by the long fuzz run: Pillow raises SyntaxError ("broken PNG file") for a damaged
    chunk, which the vision and captioning readers let through."""
    path = tmp_path / "broken.png"
    path.write_bytes(damage(png(declared=(53, 3)), [(0.6875, b"\xff")]))
    for target, read in READERS.items():
        try:
            read(path)
        except DataError as err:
            assert str(err).startswith(str(path)), (target, err)
