"""Images for the Vision Transformer: scikit-learn's digits and folders of PNG/JPEG files.

- :func:`load_digits_split`: the 1,797 8 x 8 handwritten digits bundled with scikit-learn
  (``sklearn.datasets.load_digits``, no download; pixel values 0-16, scaled to [0, 1]), split
  into train and test with a fixed seed, stratified by class.
- :func:`read_image_folder`: ``ROOT/CLASS/*.png|jpg|jpeg`` (one sub-folder per class, classes
  in sorted order), each image converted to grey or RGB and resized with Pillow; a file that
  Pillow cannot read is a :class:`~attnkit.errors.DataError` naming it.
- :func:`load_folder_split`: ``ROOT/train`` and ``ROOT/test`` when both exist, else one folder
  split like the digits.
- :func:`load_data`: the train and test sets a config names.

The augmentations used in training are in :mod:`attnkit.apps.vision.augment`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from attnkit.config import ConfigError
from attnkit.errors import DataError

if TYPE_CHECKING:
    from attnkit.apps.vision.config import VisionConfig

SUFFIXES = (".png", ".jpg", ".jpeg")


@dataclass
class ImageSet:
    """``images (n, C, S, S)`` float32 in [0, 1], ``labels (n,)`` int64, class ``names``."""

    images: Tensor
    labels: Tensor
    names: list[str]

    def __len__(self) -> int:
        return self.labels.numel()

    def subset(self, index) -> ImageSet:
        index = torch.as_tensor(np.asarray(index), dtype=torch.long)
        return ImageSet(self.images[index], self.labels[index], self.names)


def _split(data: ImageSet, test_size: float, seed: int) -> dict[str, ImageSet]:
    """A seeded split stratified by label (``sklearn.model_selection.train_test_split``)."""
    from sklearn.model_selection import train_test_split

    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be in (0, 1), got {test_size}")
    index = np.arange(len(data))
    train, test = train_test_split(
        index, test_size=test_size, random_state=seed, stratify=data.labels.numpy()
    )
    return {"train": data.subset(np.sort(train)), "test": data.subset(np.sort(test))}


def load_digits_split(test_size: float = 0.2, seed: int = 0) -> dict[str, ImageSet]:
    """scikit-learn's digits as ``{"train", "test"}`` :class:`ImageSet` s of ``(n, 1, 8, 8)``.

    The split is a function of ``(test_size, seed)`` alone: 1,437 / 360 images for the default.
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)  # (n, 1, 8, 8)
    labels = torch.tensor(digits.target, dtype=torch.long)
    return _split(ImageSet(images, labels, [str(n) for n in digits.target_names]), test_size, seed)


def read_image(path: str | Path, image_size: int, channels: int = 1) -> np.ndarray:
    """One image as float32 ``(C, S, S)`` in [0, 1]: grey (``channels=1``) or RGB, resized to
    ``S x S`` with bilinear filtering. Raises :class:`DataError` naming an unreadable file."""
    from PIL import Image, UnidentifiedImageError

    if channels not in (1, 3):
        raise ValueError(f"channels must be 1 or 3, got {channels}")
    try:
        with Image.open(path) as img:
            img = img.convert("L" if channels == 1 else "RGB")
            img = img.resize((image_size, image_size), Image.Resampling.BILINEAR)
            array = np.asarray(img, dtype=np.float32) / 255.0  # (S, S) or (S, S, 3)
    except Image.DecompressionBombError as err:  # Pillow's message gives the declared pixels
        raise DataError(f"{path}: image too large to read ({err})") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as err:  # a broken PNG
        raise DataError(f"{path}: cannot read this image ({type(err).__name__}: {err})") from None
    return array[None] if channels == 1 else array.transpose(2, 0, 1)  # (C, S, S)


def read_image_folder(
    root: str | Path, image_size: int, channels: int = 1, names: list[str] | None = None
) -> ImageSet:
    """Every PNG/JPEG under ``root/CLASS/`` (one sub-folder per class; other files are skipped).

    Args:
        names: the class names in label order (e.g. those of the training folder); by default
            the sub-folders' names, sorted. A sub-folder not in ``names`` is an error.
    """
    root = Path(root)
    if not root.is_dir():
        what = "image folder not found"
        if root.exists():
            what = "is a file, expected a folder of class sub-folders"
        raise DataError(f"{root}: {what}")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise DataError(f"{root}: no class sub-folders (expected ROOT/CLASS/image.png)")
    names = list(names) if names is not None else [p.name for p in folders]
    images, labels = [], []
    for folder in folders:
        if folder.name not in names:
            raise DataError(f"{folder}: class {folder.name!r} is not one of {names}")
        files = sorted(p for p in folder.iterdir() if p.suffix.lower() in SUFFIXES)
        for path in files:
            images.append(read_image(path, image_size, channels))
            labels.append(names.index(folder.name))
    if not images:
        raise DataError(f"{root}: no .png, .jpg or .jpeg files in its class sub-folders")
    stacked = torch.from_numpy(np.stack(images))  # (n, C, S, S)
    return ImageSet(stacked, torch.tensor(labels, dtype=torch.long), names)


def load_folder_split(
    root: str | Path, image_size: int, channels: int = 1, test_size: float = 0.2, seed: int = 0
) -> dict[str, ImageSet]:
    """``root/train`` and ``root/test`` when both exist, else a seeded stratified split of
    ``root`` itself."""
    root = Path(root)
    if (root / "train").is_dir() and (root / "test").is_dir():
        train = read_image_folder(root / "train", image_size, channels)
        return {
            "train": train,
            "test": read_image_folder(root / "test", image_size, channels, train.names),
        }
    return _split(read_image_folder(root, image_size, channels), test_size, seed)


def load_data(cfg: VisionConfig, data_dir: str | Path | None = None) -> dict[str, ImageSet]:
    """``{"train", "test"}`` for the config (a relative ``data.path`` is read from ``data_dir``
    when given). A folder whose classes do not match ``model.num_classes`` is a
    :class:`~attnkit.config.ConfigError`."""
    d, m = cfg.data, cfg.model
    if d.source == "digits":
        return load_digits_split(d.test_size, d.split_seed)
    root = Path(data_dir) / d.path if data_dir is not None and not d.path.is_absolute() else d.path
    data = load_folder_split(root, m.image_size, m.channels, d.test_size, d.split_seed)
    if len(data["train"].names) != m.num_classes:
        raise ConfigError(
            f"{root} has {len(data['train'].names)} classes {data['train'].names} but "
            f"model.num_classes is {m.num_classes}"
        )
    return data
