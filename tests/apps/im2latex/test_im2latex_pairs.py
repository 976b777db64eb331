"""Reading image/formula pairs and the page preprocessing of Deng, Kanervisto, Ling, Rush (2017),
"Image-to-Markup Generation with Coarse-to-Fine Attention" (ICML; im2markup's
preprocess_images.py: crop to the ink, pad 8, downsample by 2), on pages drawn here with PIL and
on the real im2markup sample."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attnkit.apps.im2latex.image_files import read_image
from attnkit.apps.im2latex.pairs import load_pairs, preprocess_page, read_folder, read_im2markup
from attnkit.apps.im2latex.tokens import normalise
from attnkit.datadir import default_data_dir
from attnkit.errors import DataError

SAMPLE = default_data_dir() / "im2latex-sample"


def _page(box: tuple[int, int, int, int], size: tuple[int, int] = (300, 200)) -> np.ndarray:
    """A white grey page ``size`` = (width, height) with a black box (x0, y0, x1, y1),
    inclusive corners."""
    page = np.full(size[::-1], 255, dtype=np.uint8)
    x0, y0, x1, y1 = box
    page[y0 : y1 + 1, x0 : x1 + 1] = 0
    return page


def test_preprocess_crops_pads_8_and_halves_like_im2markup() -> None:
    out = preprocess_page(_page((100, 50, 160, 70)))  # ink 21 high, 61 wide
    assert out.dtype == np.float32
    assert out.shape == ((21 + 16) // 2, (61 + 16) // 2)  # (18, 38): int(size / 2)
    assert out[:3].max() < 0.05 and out[-3:].max() < 0.05  # the 8-pixel margin, halved
    assert out[:, :3].max() < 0.05 and out[:, -3:].max() < 0.05
    assert out[5:13, 5:33].min() > 0.95  # the box, as ink (1)
    float_page = 1.0 - _page((100, 50, 160, 70)).astype(np.float32) / 255
    np.testing.assert_allclose(preprocess_page(float_page), out)


def test_preprocess_finds_the_exact_ink_box() -> None:
    page = _page((10, 20, 10, 20))  # one black pixel
    page[150, 250] = 200  # a faint grey pixel is ink too (im2markup: anything but 255)
    out = preprocess_page(page)
    assert out.shape == ((131 + 16) // 2, (241 + 16) // 2)
    assert out[4, 4] > 0.1 and out[-5, -5] > 0.0  # ink at both corners of the box


def test_preprocess_refuses_a_blank_page_and_bad_arrays() -> None:
    with pytest.raises(ValueError, match="no ink"):
        preprocess_page(np.full((50, 60), 255, dtype=np.uint8))
    with pytest.raises(ValueError, match="no ink"):
        preprocess_page(np.zeros((50, 60), dtype=np.float32))
    with pytest.raises(ValueError, match=r"\(H, W\)"):
        preprocess_page(np.zeros((5, 6, 3), dtype=np.uint8))


def test_read_image_inverts_and_composites_transparency(tmp_path: Path) -> None:
    grey = tmp_path / "grey.png"
    Image.fromarray(np.array([[0, 255], [128, 255]], dtype=np.uint8)).save(grey)
    np.testing.assert_allclose(read_image(grey), [[1, 0], [127 / 255, 0]], atol=1e-6)
    # palette black with partial transparency, as the IM2LATEX pages are stored
    pal = Image.fromarray(np.array([[0, 1], [2, 0]], dtype=np.uint8), mode="P")
    pal.putpalette([255, 255, 255, 0, 0, 0, 0, 0, 0])
    pal.save(tmp_path / "pal.png", transparency=bytes([0, 255, 0x44]))
    np.testing.assert_allclose(
        read_image(tmp_path / "pal.png"), [[0, 1], [0x44 / 255, 0]], atol=0.003
    )
    rgba = np.zeros((1, 2, 4), dtype=np.uint8)
    rgba[0, 1, 3] = 255  # transparent black, then opaque black
    Image.fromarray(rgba, mode="RGBA").save(tmp_path / "rgba.png")
    np.testing.assert_allclose(read_image(tmp_path / "rgba.png"), [[0, 1]])
    Image.fromarray(np.full((8, 8, 3), 255, dtype=np.uint8)).save(tmp_path / "white.jpg")
    assert read_image(tmp_path / "white.jpg").max() < 0.02


def test_read_image_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_text("not an image")
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 'bad.png'}: cannot read")):
        read_image(tmp_path / "bad.png")
    with pytest.raises(DataError, match="missing.png: no such image file"):
        read_image(tmp_path / "missing.png")


def _im2markup(root: Path, formulas: list[str], listing: list[str], split: str = "train") -> Path:
    """A tiny im2markup folder: formulas.lst, {split}.lst, and one page per formula."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "formulas.lst").write_text("\n".join(formulas) + "\n")
    (root / f"{split}.lst").write_text("\n".join(listing) + "\n")
    for i in range(len(formulas)):
        box = (40, 30, 120 + 10 * i, 45 + 10 * i)  # 81 + 10 i wide, 16 + 10 i high
        Image.fromarray(_page(box)).save(root / "images" / f"p{i}.png")
    return root


def test_read_im2markup_reads_normalises_and_preprocesses(tmp_path: Path) -> None:
    root = _im2markup(tmp_path, [r"x^2 \label{a}", r"{a \over b}"], ["1 p1 basic", "0 p0 basic"])
    pairs = read_im2markup(root, "train")
    assert [p.name for p in pairs] == ["p1", "p0"]
    assert pairs[0].tokens == normalise(r"\frac{a}{b}") and pairs[1].tokens == [
        "x",
        "^",
        "{",
        "2",
        "}",
    ]
    assert pairs[0].image.shape == ((26 + 16) // 2, (91 + 16) // 2)
    assert pairs[1].image.shape == ((16 + 16) // 2, (81 + 16) // 2)
    assert len(read_im2markup(root, "train", limit=1)) == 1
    whole = read_im2markup(root, "train", preprocess=False)
    assert whole[0].image.shape == (200, 300) and whole[0].image.max() == 1.0
    (root / "validate.lst").write_text("0 p0 basic\n")
    assert [p.name for p in load_pairs(root, "valid")] == ["p0"]  # "valid" means validate


@pytest.mark.parametrize(
    ("listing", "error", "message"),
    [
        (["0 p0 basic", "zero p0 basic"], ValueError, "train.lst line 2: bad formula index 'zero'"),
        (["7 p0 basic"], ValueError, "train.lst line 1: formula index 7 is past the end"),
        (["0"], ValueError, "train.lst line 1: expected 'formula_index image_name"),
        (["0 p0 basic", "", "1 nowhere basic"], DataError, "nowhere.png: no such image"),
    ],
)
def test_im2markup_list_errors_name_file_and_line(tmp_path: Path, listing, error, message) -> None:
    root = _im2markup(tmp_path, ["x", "y"], listing)
    with pytest.raises(error, match=re.escape(message)) as caught:
        read_im2markup(root, "train")
    if "nowhere" in message:
        assert "train.lst line 3" in str(caught.value)


def test_im2markup_missing_split_and_unreadable_image(tmp_path: Path) -> None:
    root = _im2markup(tmp_path, ["x"], ["0 p0 basic"])
    with pytest.raises(FileNotFoundError, match=re.escape(f"{root / 'test.lst'}: no list")):
        read_im2markup(root, "test")
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        read_im2markup(root, "dev")
    (root / "images" / "p0.png").write_bytes(b"\x89PNG broken")
    with pytest.raises(
        ValueError, match=r"p0\.png: cannot read it as an image \(listed at .*train\.lst line 1\)"
    ):
        read_im2markup(root, "train")


def test_data_faults_are_skipped_with_their_line_or_refused_when_strict(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _im2markup(
        tmp_path,
        ["x", r"\label{eq} % all comment", r"\frac{a", "y"],
        [f"{i} p{i} basic" for i in range(4)],
    )
    blank = np.full((200, 300), 255, dtype=np.uint8)
    Image.fromarray(blank).save(root / "images" / "p3.png")
    with caplog.at_level(logging.WARNING, logger="attnkit.apps.im2latex.pairs"):
        pairs = read_im2markup(root, "train")
    assert [p.name for p in pairs] == ["p0"]
    log = caplog.text
    assert "formulas.lst line 2 (for " in log and "empty formula" in log
    assert "formulas.lst line 3 (for " in log and "argument" in log
    assert "p3.png (listed at" in log and "no ink" in log
    with pytest.raises(
        ValueError, match=r"formulas\.lst line 2 \(for .*train\.lst line 2\): empty formula"
    ):
        read_im2markup(root, "train", strict=True)
    (root / "train.lst").write_text("3 p3 basic\n")
    with pytest.raises(ValueError, match=r"p3\.png \(listed at .*train\.lst line 1\): no ink"):
        read_im2markup(root, "train", strict=True)


def _folder(root: Path, lines: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    Image.fromarray(_page((20, 10, 49, 19), size=(100, 40))).save(root / "a.png")
    (root / "formulas.tsv").write_text("\n".join(lines) + "\n")
    return root


def test_read_folder_crops_formula_images_with_a_margin(tmp_path: Path) -> None:
    root = _folder(tmp_path, ["a.png\t\\frac12", "", "a.png\tx^2"])
    pairs = read_folder(root)
    assert [p.tokens for p in pairs] == [normalise(r"\frac{1}{2}"), ["x", "^", "{", "2", "}"]]
    image = pairs[0].image
    assert image.shape == (10 + 8, 30 + 8)  # the 10 x 30 box and 4 pixels all round
    assert image[4:14, 4:34].min() == 1.0 and image.sum() == 300
    assert [p.name for p in load_pairs(tmp_path, "train", limit=1)] == ["a.png"]
    with pytest.raises(FileNotFoundError, match="no test pairs found"):
        load_pairs(tmp_path, "test")  # a root formulas.tsv is training data only


def test_a_users_folder_is_strict_unless_told_otherwise(tmp_path: Path) -> None:
    root = _folder(tmp_path, ["a.png\tx", "a.png\t\\label{x}"])
    with pytest.raises(ValueError, match=re.escape("formulas.tsv line 2: empty formula")):
        load_pairs(root, "train")
    assert [p.tokens for p in load_pairs(root, "train", strict=False)] == [["x"]]


@pytest.mark.parametrize(
    ("line", "error", "message"),
    [
        ("a.png x^2", ValueError, "formulas.tsv line 2: expected 'image_file<TAB>latex'"),
        ("b.png\tx", DataError, "b.png: no such image file (listed at"),
        ("a.png\t{x", ValueError, "formulas.tsv line 2: group: expected '}'"),
        ("a.png\t\\label{x}", ValueError, "formulas.tsv line 2: empty formula"),
    ],
)
def test_read_folder_errors_name_file_and_line(tmp_path: Path, line, error, message) -> None:
    root = _folder(tmp_path, ["a.png\tx", line])
    with pytest.raises(error, match=re.escape(message)) as caught:
        read_folder(root, strict=True)
    assert "formulas.tsv line 2" in str(caught.value)


def test_load_pairs_dispatches_and_says_what_it_looked_for(tmp_path: Path) -> None:
    _folder(tmp_path / "train", ["a.png\tx"])
    _folder(tmp_path / "test", ["a.png\ty", "a.png\tz"])
    assert [p.tokens for p in load_pairs(tmp_path, "test")] == [["y"], ["z"]]
    assert [p.tokens for p in load_pairs(tmp_path, "train")] == [["x"]]
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "formulas.lst"))) as e:
        load_pairs(tmp_path, "validate")
    assert "formulas.tsv" in str(e.value)


def test_real_sample_test_pairs() -> None:
    if not (SAMPLE / "formulas.lst").is_file():
        pytest.skip(f"{SAMPLE} not found (the im2markup sample)")
    pairs = load_pairs(SAMPLE, "test", limit=5)
    listing = (SAMPLE / "test.lst").read_text().split("\n")[:5]
    formulas = (SAMPLE / "formulas.lst").read_text().split("\n")
    assert [p.name for p in pairs] == [line.split()[1] for line in listing]
    for pair, line in zip(pairs, listing, strict=True):
        assert pair.tokens == normalise(formulas[int(line.split()[0])])
        h, w = pair.image.shape
        assert 10 < h < 200 and 10 < w < 900, pair.image.shape
        assert 0.01 < (pair.image > 0.5).mean() < 0.5
        assert len(np.unique(pair.image)) > 20  # anti-aliased grey, not two-level ink
