"""Bad bytes in im2latex's own files: ``formulas.tsv`` and the im2markup lists read through
:mod:`attnkit.textfiles` (invalid UTF-8 and NUL named by file and line, a BOM removed), the
formula count of ``formulas.lst`` not counting its final line break, and an image that declares
more pixels than Pillow will open named by its file, in training and in ``predict``."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attnkit.apps.im2latex.image_files import read_image
from attnkit.apps.im2latex.pairs import read_folder, read_im2markup
from attnkit.apps.im2latex.run import formula_image
from attnkit.errors import DataError


def bomb_png(path: Path, width: int = 30000, height: int = 30000) -> Path:
    """A valid PNG header declaring ``width x height`` grey pixels, with no pixel data."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    signature = b"\x89PNG\r\n\x1a\n"
    path.write_bytes(signature + chunk(b"IHDR", header) + chunk(b"IEND", b""))
    return path


def _folder(root: Path, table: bytes) -> Path:
    """A user's folder: one formula image ``a.png`` and ``formulas.tsv`` holding ``table``."""
    page = np.full((40, 100), 255, dtype=np.uint8)
    page[10:20, 20:50] = 0
    Image.fromarray(page).save(root / "a.png")
    (root / "formulas.tsv").write_bytes(table)
    return root


def _error(read, *args, **kwargs) -> str:
    with pytest.raises(DataError) as caught:
        read(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_formulas_tsv_invalid_utf8_names_the_file_and_line(tmp_path: Path) -> None:
    root = _folder(tmp_path, b"a.png\tx\na.png\t\\alpha\xff\n")
    message = _error(read_folder, root)
    assert message.startswith(f"{root / 'formulas.tsv'}, line 2: invalid UTF-8 (byte 0xff")


def test_formulas_tsv_nul_is_refused_not_trained_on(tmp_path: Path) -> None:
    root = _folder(tmp_path, b"a.png\tx\na.png\tx\x00y\n")
    message = _error(read_folder, root)
    assert message.startswith(f"{root / 'formulas.tsv'}, line 2, column 8: NUL character")


def test_formulas_tsv_byte_order_mark_is_removed(tmp_path: Path) -> None:
    root = _folder(tmp_path, b"\xef\xbb\xbfa.png\tx\r\na.png\ty\r\n")
    pairs = read_folder(root)
    assert [p.name for p in pairs] == ["a.png", "a.png"]
    assert [p.tokens for p in pairs] == [["x"], ["y"]]


def test_formulas_tsv_lines_end_at_newline_only(tmp_path: Path) -> None:
    root = _folder(tmp_path, "a.png\tx \u2028 y\nb.png\tz\n".encode())
    message = _error(read_folder, root)  # the U+2028 is in line 1's formula
    assert message.startswith(f"{root / 'b.png'}: no such image file (listed at ")
    assert message.endswith("formulas.tsv line 2)")


def _im2markup(root: Path, formulas: bytes, listing: bytes) -> Path:
    (root / "images").mkdir(parents=True)
    page = np.full((60, 120), 255, dtype=np.uint8)
    page[20:30, 30:80] = 0
    Image.fromarray(page).save(root / "images" / "p0.png")
    (root / "formulas.lst").write_bytes(formulas)
    (root / "train.lst").write_bytes(listing)
    return root


@pytest.mark.parametrize(("formulas", "count"), [(b"x\n", "1 line"), (b"x\ny\n", "2 lines")])
def test_formulas_lst_count_ignores_the_final_line_break(tmp_path, formulas, count) -> None:
    root = _im2markup(tmp_path, formulas, b"5 p0 basic\n")
    message = _error(read_im2markup, root, "train")
    assert f"formula index 5 is past the end of {root / 'formulas.lst'} ({count})" in message
    root = _im2markup(tmp_path / "one", b"x\n", b"1 p0 basic\n")  # not the empty "line 2"
    assert "formula index 1 is past the end" in _error(read_im2markup, root, "train")


def test_formulas_lst_byte_order_mark_is_removed(tmp_path: Path) -> None:
    root = _im2markup(tmp_path, b"\xef\xbb\xbfx\n", b"\xef\xbb\xbf0 p0 basic\n")
    assert [p.tokens for p in read_im2markup(root, "train")] == [["x"]]


def test_split_list_invalid_utf8_names_the_file_and_line(tmp_path: Path) -> None:
    root = _im2markup(tmp_path, b"x\n", b"0 p0 basic\n0 p\xe9 basic\n")
    message = _error(read_im2markup, root, "train")
    assert message.startswith(f"{root / 'train.lst'}, line 2: invalid UTF-8 (byte 0xe9")


def test_an_image_too_large_to_open_names_the_file_and_its_size(tmp_path: Path) -> None:
    bomb = bomb_png(tmp_path / "huge.png")
    for read in (read_image, formula_image):  # training's reader, and predict's
        message = _error(read, bomb)
        assert message.startswith(f"{bomb}: image too large to read"), message
        assert "900000000 pixels" in message and "no formula" not in message
    root = _folder(tmp_path, b"huge.png\tx\n")
    message = _error(read_folder, root)
    assert message.startswith(f"{bomb}: image too large to read (listed at ")


def test_an_image_name_too_long_for_the_file_system_is_a_data_error(tmp_path: Path) -> None:
    root = _folder(tmp_path, b"a.png\tx\n" + b"n" * 5000 + b".png\ty\n")
    message = _error(read_folder, root)
    assert message.startswith(str(root / ("n" * 5000)))
    assert message.endswith(f"(listed at {root / 'formulas.tsv'} line 2)")
