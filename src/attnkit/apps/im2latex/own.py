"""A user's own test set (``attnkit evaluate RUN --src IMAGES --ref FORMULAS``): formula
images with their LaTeX, one formula a line.

``--src`` is a folder of PNG or JPEG images (sorted by name, ``2.png`` before ``10.png``) or a
text file listing them one a line, relative to its folder
(:func:`attnkit.textfiles.list_files`); ``--ref`` holds one formula a line in the same order.
Images are read as a folder of real pairs is (:func:`~.pairs.read_folder`: dark ink on light
paper, cropped to the ink with a 4-pixel margin) and fitted to the run's largest size;
formulas are normalised into the paper's tokens (:mod:`.tokens`). Every fault is an error
naming the file and line: files that do not pair up, a formula that does not parse or
normalises to nothing, an unreadable or blank image.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnkit.apps.im2latex.config import FormulaDataConfig
from attnkit.apps.im2latex.image_files import read_grey
from attnkit.apps.im2latex.images import fit
from attnkit.apps.im2latex.pairs import FOLDER_MARGIN, _crop, _formula
from attnkit.apps.im2latex.sets import FormulaSet
from attnkit.errors import DataError
from attnkit.textfiles import paired_files, read_listed, where


def own_pairs(src: str | Path, ref: str | Path, data: FormulaDataConfig) -> FormulaSet:
    """The images of ``src`` with the formulas of ``ref`` (module docstring), each image
    fitted into ``data.max_height x data.max_width``; named by their files."""
    files, latex = paired_files(src, ref, "formula")
    formulas = [_formula(line, where(ref, n), strict=True) for n, line in enumerate(latex, 1)]
    images = read_listed(files, _formula_image)
    fitted = [fit(image, data.max_height, data.max_width) for image in images]
    return FormulaSet(fitted, formulas, [str(f.path) for f in files])


def _formula_image(path: Path) -> np.ndarray:
    """A formula image as ink ``(H, W)`` (1 = ink) cropped to it, as :func:`~.pairs.read_folder`
    reads one; a blank image is a :class:`DataError` naming the file."""
    grey = read_grey(path)
    try:
        return _crop(255 - grey, FOLDER_MARGIN).astype(np.float32) / 255
    except ValueError as err:
        raise DataError(f"{path}: {err}") from None
