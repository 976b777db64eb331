"""Image/formula pairs from disk: im2markup's layout and a plain folder, with the paper's cropping.

Deng, Kanervisto, Ling and Rush (2017), "Image-to-Markup Generation with Coarse-to-Fine
Attention" (ICML; im2markup, §5) render each formula on a whole pdflatex page and preprocess it
(``scripts/preprocessing/preprocess_images.py`` with ``utils/image_utils.py``): crop to the
bounding box of every pixel that is not pure white, pad 8 white pixels on each side, pad on to
the smallest of a list of bucket sizes, and downsample by 2 with Lanczos (``int(size / 2)``).
:func:`preprocess_page` does all of that except the bucket padding, a batching matter here
(``images.batch`` pads each batch to its largest image).

Package image convention: float32 ``(H, W)`` in ``[0, 1]``, 1 = ink, 0 = paper.

Formulas that normalise to nothing or fail to parse, and blank pages, are data faults that the
paper's ``preprocess_filter.py`` drops: so do the readers here, logging each with its file and
line, unless ``strict=True`` makes them errors. Missing files, bad lines and unreadable images
are always errors, each naming the file and line. ``formulas.tsv`` and the split lists are read
by :func:`attnkit.textfiles.read_text` (a BOM removed; invalid UTF-8 and NUL refused, naming the
line); images by :mod:`~attnkit.apps.im2latex.image_files`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from attnkit.apps.im2latex.image_files import read_grey
from attnkit.apps.im2latex.tokens import normalise
from attnkit.errors import DataError
from attnkit.textfiles import BOM, read_bytes, read_text

log = logging.getLogger(__name__)

PAD = 8  # preprocess_images.py --pad-size [8, 8, 8, 8], pixels at page resolution
DOWNSAMPLE = 2  # preprocess_images.py --downsample-ratio 2
FOLDER_MARGIN = 4  # around a cropped user image: PAD after the paper's downsampling
SPLITS = {"train": "train", "validate": "validate", "valid": "validate", "test": "test"}


@dataclass
class Pair:
    """One formula image ``(H, W)`` (1 = ink) with its normalised tokens and a name."""

    image: np.ndarray
    tokens: list[str]
    name: str


def _ink_uint8(page: np.ndarray) -> np.ndarray:
    """Ink 0..255 from a grey uint8 page (0 = black) or an inverted float page (1 = ink)."""
    page = np.asarray(page)
    if page.ndim != 2:
        raise ValueError(f"a page must be (H, W) grey, got shape {page.shape}")
    if page.dtype == np.uint8:
        return 255 - page
    if np.issubdtype(page.dtype, np.floating):
        return np.rint(np.clip(page, 0.0, 1.0) * 255).astype(np.uint8)
    raise ValueError(f"a page must be uint8 grey or float ink, got dtype {page.dtype}")


def _crop(ink: np.ndarray, margin: int) -> np.ndarray:
    """``ink`` cut to the bounding box of its non-zero pixels with ``margin`` zeros around."""
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if rows.size == 0:
        raise ValueError("no ink: the image is blank")
    box = ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    return np.pad(box, margin)


def preprocess_page(page: np.ndarray) -> np.ndarray:
    """Deng et al. (2017, §5; ``preprocess_images.py``): crop a rendered page to its ink,
    pad ``PAD`` = 8 pixels of paper on every side, downsample by 2 with Lanczos to
    ``(int(h / 2), int(w / 2))``; no bucket padding (module docstring).

    Args:
        page: ``(H, W)`` grey uint8 (0 = black ink, 255 = paper) or float ink in ``[0, 1]``.
    Returns:
        float32 ``(h, w)`` in ``[0, 1]``, 1 = ink. Raises ValueError "no ink" on a blank page.
    """
    padded = _crop(_ink_uint8(page), PAD)
    h, w = padded.shape
    size = (max(1, int(w / DOWNSAMPLE)), max(1, int(h / DOWNSAMPLE)))  # PIL's (width, height)
    small = Image.fromarray(padded).resize(size, Image.LANCZOS)
    return np.asarray(small, dtype=np.float32) / 255


def _formula(latex: str, where: str, strict: bool) -> list[str] | None:
    """Normalised tokens; a formula that fails to parse or normalises to nothing is a fault
    (:func:`_fault`) and gives None."""
    try:
        tokens = normalise(latex)
    except ValueError as e:
        _fault(strict, f"{where}: {e}")
        return None
    if not tokens:
        _fault(strict, f"{where}: empty formula (after normalisation)")
        return None
    return tokens


def _fault(strict: bool, message: str) -> None:
    """A data fault the paper's filter drops: an error when ``strict``, else logged."""
    if strict:
        raise DataError(message)
    log.warning("skipped: %s", message)


def _lines(text: str) -> list[str]:
    """``text`` split at ``\n`` only (some arXiv formulas hold other line-break characters),
    a final ``\n`` ending the last line (not starting an empty one), each line's ``\r``
    (Windows line ends) removed."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _formulas(root: Path) -> list[str]:
    """The raw lines of ``root/formulas.lst`` (line i is formula i, Deng et al. 2017), a BOM
    removed. Decoded leniently, as the paper's file holds bytes that are not UTF-8 (im2markup
    issue #41): each becomes U+FFFD in its formula."""
    path = root / "formulas.lst"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no formulas file (im2markup layout)")
    return _lines(read_bytes(path).removeprefix(BOM).decode("utf-8", errors="replace"))


def _list_line(line: str, where: str, formulas: list[str], root: Path) -> tuple[int, Path]:
    """``formula_index image_name [render_type]`` as the index and the image's path."""
    fields = line.split()
    if len(fields) < 2:
        raise DataError(f"{where}: expected 'formula_index image_name render_type', got {line!r}")
    if not fields[0].isdigit():
        raise DataError(f"{where}: bad formula index {fields[0]!r} (not a whole number)")
    index = int(fields[0])
    if index >= len(formulas):
        raise DataError(
            f"{where}: formula index {index} is past the end of "
            f"{root / 'formulas.lst'} ({len(formulas)} line{'' if len(formulas) == 1 else 's'})"
        )
    name = fields[1] if Path(fields[1]).suffix else fields[1] + ".png"
    return index, root / "images" / name


def read_im2markup(
    root: Path,
    split: str,
    *,
    limit: int | None = None,
    preprocess: bool = True,
    strict: bool = False,
) -> list[Pair]:
    """Pairs of one split in im2markup's layout (Deng et al. 2017, §5): ``formulas.lst`` (line
    i is formula i, 0-based), ``{split}.lst`` of ``formula_index image_name render_type``
    lines, ``images/{image_name}.png``. Formulas are normalised (:mod:`.tokens`), pages
    preprocessed (:func:`preprocess_page`; ``preprocess=False`` keeps the whole page as ink).

    Args:
        split: ``train``, ``validate`` (or ``valid``) or ``test``.
        limit: at most this many pairs, the first of the list.
        strict: empty or unparsable formulas and blank pages are errors, not skipped.
    """
    root = Path(root)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {sorted(SPLITS)}")
    formulas = _formulas(root)
    listing = root / f"{SPLITS[split]}.lst"
    if not listing.is_file():
        raise FileNotFoundError(f"{listing}: no list for split {split!r} in {root}")
    pairs: list[Pair] = []
    lines = _lines(read_text(listing))
    for number, line in enumerate(lines, 1):
        if limit is not None and len(pairs) >= limit:
            break
        if not line.strip():
            continue
        where = f"{listing} line {number}"
        index, path = _list_line(line, where, formulas, root)
        source = f"{root / 'formulas.lst'} line {index + 1} (for {where})"
        if (tokens := _formula(formulas[index], source, strict)) is None:
            continue
        grey = read_grey(path, where)
        if not preprocess:
            pairs.append(Pair((255 - grey).astype(np.float32) / 255, tokens, path.stem))
        elif (image := _page(grey, f"{path} (listed at {where})", strict)) is not None:
            pairs.append(Pair(image, tokens, path.stem))
    return pairs


def _page(grey: np.ndarray, where: str, strict: bool) -> np.ndarray | None:
    """:func:`preprocess_page`, a blank page being a fault (:func:`_fault`) that gives None."""
    try:
        return preprocess_page(grey)
    except ValueError as e:
        _fault(strict, f"{where}: {e}")
        return None


def read_folder(root: Path, *, limit: int | None = None, strict: bool = False) -> list[Pair]:
    """Pairs from a folder with ``formulas.tsv``: ``image_file<TAB>latex`` lines, image paths
    relative to the folder. The images are formulas already (no page preprocessing): read
    as :func:`~attnkit.apps.im2latex.image_files.read_image` does, cropped to the ink with
    ``FOLDER_MARGIN`` pixels around, the paper's margin at its downsampled scale (Deng et al.
    2017, §5)."""
    root = Path(root)
    table = root / "formulas.tsv"
    if not table.is_file():
        raise FileNotFoundError(f"{table}: no such file (image_file<TAB>latex lines)")
    pairs: list[Pair] = []
    for number, line in enumerate(_lines(read_text(table)), 1):
        if limit is not None and len(pairs) >= limit:
            break
        if not line.strip():
            continue
        where = f"{table} line {number}"
        name, tab, latex = line.partition("\t")
        if not tab or not name.strip():
            raise DataError(f"{where}: expected 'image_file<TAB>latex', got {line[:80]!r}")
        if (tokens := _formula(latex, where, strict)) is None:
            continue
        grey = read_grey(root / name.strip(), where)
        try:
            image = _crop(255 - grey, FOLDER_MARGIN).astype(np.float32) / 255
        except ValueError as e:
            _fault(strict, f"{root / name.strip()} (listed at {where}): {e}")
            continue
        pairs.append(Pair(image, tokens, name.strip()))
    return pairs


def load_pairs(
    root: Path, split: str, limit: int | None = None, *, strict: bool | None = None
) -> list[Pair]:
    """The pairs of ``split`` under ``root``: im2markup's layout when ``formulas.lst`` is there
    (:func:`read_im2markup`, faults skipped as the paper's filter does unless ``strict``);
    else ``{split}/formulas.tsv``, or for ``train`` only ``formulas.tsv`` at the root
    (:func:`read_folder`; a user's folder is strict unless ``strict=False``: an empty or
    unparsable formula is an error). A root ``formulas.tsv`` never serves validation or test,
    so a score is never measured on training images."""
    root = Path(root)
    if (root / "formulas.lst").is_file():
        return read_im2markup(root, split, limit=limit, strict=bool(strict))
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {sorted(SPLITS)}")
    folders = [root / split, root / SPLITS[split], *([root] if SPLITS[split] == "train" else [])]
    for folder in dict.fromkeys(folders):
        if (folder / "formulas.tsv").is_file():
            return read_folder(folder, limit=limit, strict=strict is not False)
    looked = [root / "formulas.lst", *(f / "formulas.tsv" for f in dict.fromkeys(folders))]
    raise FileNotFoundError(
        f"{root}: no {split} pairs found; looked for "
        + ", ".join(map(str, looked))
        + " (im2markup layout, or formulas.tsv with image_file<TAB>latex lines)"
    )
