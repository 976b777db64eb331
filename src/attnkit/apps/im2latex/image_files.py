"""Formula images from files as the package's grey: any PNG or JPEG (grey, RGB, palette, with
or without transparency), transparency composited onto white paper.

The IM2LATEX pages are palette PNGs whose ink is black with 16 levels of *transparency*; the
paper's ``convert('L')`` (Deng et al. 2017, im2markup ``preprocess_images.py``) drops the alpha
and so sees two-level ink. Compositing keeps the anti-aliasing (the crop box is the same).

Every error names the file: a missing one, one Pillow cannot read, and one that declares more
pixels than Pillow opens (its ``DecompressionBombError``, with the declared pixel count).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from attnkit.errors import DataError

_LUMA = np.array([299, 587, 114], dtype=np.float64) / 1000  # PIL's RGB -> L weights


def _composite(rgb: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Grey uint8 of colours ``(..., 3)`` with ``alpha`` (0..255) laid on white paper."""
    grey = rgb.astype(np.float64) @ _LUMA
    return np.rint(255 - alpha.astype(np.float64) / 255 * (255 - grey)).astype(np.uint8)


def _grey(image: Image.Image) -> np.ndarray:
    """Grey uint8 ``(H, W)``, 255 = paper, with any transparency composited onto white."""
    if image.mode == "P":
        palette = np.array(image.getpalette() or [0, 0, 0], dtype=np.uint8).reshape(-1, 3)
        lut = np.full(256, 255, dtype=np.uint8)
        alpha = np.full(len(palette), 255, dtype=np.uint8)
        transparency = image.info.get("transparency")
        if isinstance(transparency, bytes):
            values = np.frombuffer(transparency, dtype=np.uint8)[: len(palette)]
            alpha[: len(values)] = values
        elif isinstance(transparency, int) and transparency < len(palette):
            alpha[transparency] = 0
        lut[: len(palette)] = _composite(palette, alpha)
        return lut[np.asarray(image)]
    if image.mode in ("RGBA", "LA", "PA", "La", "RGBa") or "transparency" in image.info:
        rgba = np.asarray(image.convert("RGBA"))
        return _composite(rgba[..., :3], rgba[..., 3])
    return np.asarray(image.convert("L"))


def read_grey(path: Path, where: str = "") -> np.ndarray:
    """The image at ``path`` as grey uint8; a :class:`DataError` naming the file (and ``where``
    it is listed) when it is missing, unreadable or larger than Pillow opens."""
    path = Path(path)
    suffix = f" (listed at {where})" if where else ""
    try:
        found = path.is_file()
    except OSError as e:  # a name too long for the file system, say
        raise DataError(f"{path}: cannot open it ({e.strerror or e}){suffix}") from None
    if not found:
        raise DataError(f"{path}: no such image file{suffix}")
    try:
        with Image.open(path) as image:
            image.load()
            return _grey(image)
    except Image.DecompressionBombError as e:  # Pillow's message gives the declared pixels
        raise DataError(f"{path}: image too large to read{suffix} ({e})") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        raise DataError(f"{path}: cannot read it as an image{suffix}: {e}") from None


def read_image(path: Path | str) -> np.ndarray:
    """Any PNG/JPEG (grey, RGB, palette, with or without transparency) as float32 ``(H, W)`` in
    ``[0, 1]``, 1 = ink (the package's inverted grey). Errors name the file."""
    return (255 - read_grey(Path(path))).astype(np.float32) / 255
