"""Images and binary masks for segmentation: any folder of PNG pairs, and the ISBI 2012 EM slices.

- :class:`Sample`: one grey image ``(1, H, W)`` float32 in [0, 1], its mask ``(1, H, W)`` uint8
  in {0, 1} (1 = foreground) and a name.
- :func:`read_image`, :func:`read_mask`: one PNG as a grey image or a binary mask.
- :func:`read_pairs`: ``IMAGE_DIR/NAME.png`` with ``MASK_DIR/NAME.png``, matched by file name.
  Every problem is a :class:`~attnkit.errors.DataError` whose one-line message starts with the
  path: a missing folder, a file where a folder belongs, no PNG files, an image without its
  mask or a mask without its image, an unreadable or truncated PNG, an image and mask of
  different sizes, a mask that holds more than two values.
- :func:`load_isbi`: the 30 labelled 512 x 512 slices of the ISBI 2012 EM challenge (Cardona et
  al. 2010; ``isbi-em/image/{0..29}.png`` and ``isbi-em/label/{0..29}.png``), with a **fixed
  split**: slices 0-23 train, 24-29 test (the challenge's own test slices have no public
  labels). Labels are 255 inside cells and 0 on membranes; the foreground segmented is the
  membrane, so masks are read with ``foreground="black"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnkit.datadir import default_data_dir
from attnkit.errors import DataError
from attnkit.textfiles import check_file, natural_key

__all__ = [
    "ISBI_SPLITS",
    "Sample",
    "default_isbi_dir",
    "load_isbi",
    "read_image",
    "read_mask",
    "read_pairs",
    "read_png",
    "resize",
]

ISBI_SPLITS = {"train": range(0, 24), "test": range(24, 30), "all": range(0, 30)}
FOREGROUNDS = ("white", "black")


@dataclass(frozen=True, eq=False)
class Sample:
    """``image (1, H, W)`` float32 in [0, 1]; ``mask (1, H, W)`` uint8 in {0, 1}, 1 = foreground;
    ``name``: the file name the pair was read from (or another label)."""

    image: np.ndarray
    mask: np.ndarray
    name: str


def default_isbi_dir() -> Path:
    """``$ATTNKIT_DATA_DIR/isbi-em``, else ``../shared/data/isbi-em`` relative to the working
    directory (as the other applications find their data)."""
    return default_data_dir() / "isbi-em"


def read_png(path: str | Path) -> np.ndarray:
    """A PNG file's grey values ``(H, W)``: uint8 for 8-bit files, uint16 for 16-bit grey ones
    (colour is converted to grey with Pillow's ITU-R 601-2 luma). Raises :class:`DataError`
    naming the file when it is missing, a folder, not a PNG, unreadable (truncated), or declares
    more pixels than Pillow opens (its ``DecompressionBombError``: a decompression bomb?)."""
    from PIL import Image

    path = check_file(path)
    try:
        with Image.open(path) as img:
            kind = img.format
            img.load()
            if img.mode in ("I;16", "I;16B", "I;16L", "I"):
                values = np.asarray(img, dtype=np.int64).clip(0, 65535).astype(np.uint16)
            else:
                values = np.asarray(img.convert("L"), dtype=np.uint8)
    except Image.DecompressionBombError as err:  # Pillow's message gives the declared pixels
        raise DataError(f"{path}: image too large to read ({err})") from None
    except (OSError, SyntaxError, ValueError) as err:
        reason = f"{type(err).__name__}: {err}".replace("\n", " ")
        raise DataError(f"{path}: cannot read this PNG ({reason})") from None
    if kind != "PNG":
        raise DataError(f"{path}: not a PNG file (Pillow reads it as {kind})")
    return values


def read_image(path: str | Path) -> np.ndarray:
    """A PNG as a grey image ``(1, H, W)`` float32 in [0, 1] (8-bit values / 255, 16-bit ones
    / 65535); the errors of :func:`read_png`."""
    values = read_png(path)
    scale = 65535.0 if values.dtype == np.uint16 else 255.0
    return (values.astype(np.float32) / np.float32(scale))[None]  # (1, H, W)


def read_mask(path: str | Path, foreground: str = "white") -> np.ndarray:
    """A binary mask ``(H, W)`` uint8 in {0, 1} from a PNG of at most two grey values.

    ``foreground="white"``: the larger value is foreground (1); ``"black"``: the smaller. A mask
    of one value is all background or all foreground: 0 reads as black, any other value as
    white. More than two values is a :class:`DataError` listing them.
    """
    if foreground not in FOREGROUNDS:
        raise ValueError(f"foreground must be 'white' or 'black', got {foreground!r}")
    values = read_png(path)
    distinct = np.unique(values)
    if len(distinct) > 2:
        shown = ", ".join(str(v) for v in distinct[:8]) + (", ..." if len(distinct) > 8 else "")
        raise DataError(
            f"{path}: values {shown} ({len(distinct)} distinct); a mask must hold two values "
            "(background and foreground)"
        )
    white = values == distinct[-1] if len(distinct) == 2 else values > 0
    return (white if foreground == "white" else ~white).astype(np.uint8)


def _pngs(folder: Path, role: str) -> dict[str, Path]:
    """``{file stem: path}`` of the PNG files in ``folder`` (``role``: "image" or "mask")."""
    if not folder.is_dir():
        what = "is a file" if folder.exists() else f"{role} folder not found"
        raise DataError(f"{folder}: {what}, expected a folder of {role} PNG files")
    found = {p.stem: p for p in folder.iterdir() if p.suffix.lower() == ".png" and p.is_file()}
    if not found:
        raise DataError(f"{folder}: no PNG files (*.png) in this {role} folder")
    return found


def _unmatched(paths: list[Path], other: Path, what: str) -> DataError:
    """The error for files of one folder that have no partner in ``other``."""
    more = ""
    if len(paths) > 1:
        names = ", ".join(p.name for p in paths[1:6]) + (", ..." if len(paths) > 6 else "")
        more = f" (and {len(paths) - 1} more: {names})"
    return DataError(f"{paths[0]}: no {what} named {paths[0].stem}.png in {other}{more}")


def read_pairs(
    image_dir: str | Path, mask_dir: str | Path, *, foreground: str = "white"
) -> list[Sample]:
    """Every ``image_dir/NAME.png`` with its mask ``mask_dir/NAME.png`` (matched by the name
    without its suffix, in natural order: ``2`` before ``10``), as :class:`Sample` s.

    Images are read as grey and scaled to [0, 1] (by 255, or 65535 for 16-bit files); masks by
    :func:`read_mask` with ``foreground`` ("white": the brighter value is foreground, "black":
    the darker). Raises :class:`DataError` (see the module's docstring); every file is checked
    before anything is returned.
    """
    if foreground not in FOREGROUNDS:
        raise ValueError(f"foreground must be 'white' or 'black', got {foreground!r}")
    image_dir, mask_dir = Path(image_dir), Path(mask_dir)
    images, masks = _pngs(image_dir, "image"), _pngs(mask_dir, "mask")
    lonely = sorted(
        (p for s, p in images.items() if s not in masks), key=lambda p: natural_key(p.name)
    )
    if lonely:
        raise _unmatched(lonely, mask_dir, "mask")
    orphans = sorted(
        (p for s, p in masks.items() if s not in images), key=lambda p: natural_key(p.name)
    )
    if orphans:
        raise _unmatched(orphans, image_dir, "image")
    samples = []
    for stem in sorted(images, key=natural_key):
        image = read_image(images[stem])  # (1, H, W)
        mask = read_mask(masks[stem], foreground)
        if mask.shape != image.shape[1:]:
            (h, w), (mh, mw) = image.shape[1:], mask.shape
            raise DataError(
                f"{masks[stem]}: mask is {mw}x{mh} (width x height), its image "
                f"{images[stem]} is {w}x{h}"
            )
        samples.append(Sample(image, mask[None], images[stem].name))
    return samples


def resize(sample: Sample, size: int) -> Sample:
    """``sample`` resized to ``size x size``: the image with bilinear filtering (Pillow's,
    which averages over the source pixels when shrinking), the mask with nearest neighbour so
    it stays binary."""
    from PIL import Image

    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    image = Image.fromarray(sample.image[0]).resize((size, size), Image.Resampling.BILINEAR)
    mask = Image.fromarray(sample.mask[0]).resize((size, size), Image.Resampling.NEAREST)
    resized = np.clip(np.asarray(image, dtype=np.float32), 0.0, 1.0)[None]  # (1, S, S)
    return Sample(resized, np.asarray(mask, dtype=np.uint8)[None], sample.name)


def isbi_slices(split: str, fold: int | None = None, folds: int = 5) -> range | list[int]:
    """The slice numbers of ``split``: the fixed split (:data:`ISBI_SPLITS`) when ``fold`` is
    None, else ``folds``-fold cross-validation over the 30 slices in contiguous blocks: fold
    ``k`` tests on block ``k`` (``30 / folds`` slices) and trains on the others. Fold 4 of 5 is
    the fixed split's test slices 24-29."""
    if fold is None:
        return ISBI_SPLITS[split]
    if not (2 <= folds <= 30 and 30 % folds == 0):
        raise ValueError(f"folds must divide the 30 slices (2, 3, 5, 6, 10, 15, 30), got {folds}")
    if not 0 <= fold < folds:
        raise ValueError(f"fold must be 0 to {folds - 1}, got {fold}")
    block = range(fold * 30 // folds, (fold + 1) * 30 // folds)
    held = {"test": list(block), "all": list(range(30))}
    return held.get(split, [i for i in range(30) if i not in block])


def load_isbi(
    root: str | Path | None = None,
    split: str = "train",
    *,
    size: int | None = None,
    fold: int | None = None,
    folds: int = 5,
) -> list[Sample]:
    """The ISBI 2012 EM slices of ``split`` from ``root`` (default :func:`default_isbi_dir`).

    Args:
        root: the folder holding ``image/{0..29}.png`` and ``label/{0..29}.png``.
        split: ``"train"`` (slices 0-23), ``"test"`` (24-29) or ``"all"`` (0-29), a fixed split
            (:data:`ISBI_SPLITS`).
        size: when given, every slice is resized to ``size x size`` (:func:`resize`).
        fold, folds: cross-validation instead of the fixed split (:func:`isbi_slices`).

    Returns:
        :class:`Sample` s in slice order, named ``"0.png"`` ..., whose masks mark the
        **membrane** (label 0) as foreground; about 22 % of the pixels.
    """
    if split not in ISBI_SPLITS:
        raise ValueError(f"ISBI split must be 'train', 'test' or 'all', got {split!r}")
    root = Path(root) if root is not None else default_isbi_dir()
    if not root.is_dir():
        raise DataError(
            f"{root}: ISBI 2012 EM data not found (set ATTNKIT_DATA_DIR to the folder holding "
            "isbi-em/, or pass the isbi-em folder itself)"
        )
    pairs = {s.name: s for s in read_pairs(root / "image", root / "label", foreground="black")}
    slices = isbi_slices(split, fold, folds)
    missing = [f"{i}.png" for i in slices if f"{i}.png" not in pairs]
    if missing:
        raise DataError(f"{root / 'image'}: ISBI slice(s) {', '.join(missing)} not found")
    samples = [pairs[f"{i}.png"] for i in slices]
    return [resize(s, size) for s in samples] if size is not None else samples
