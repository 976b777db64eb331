"""Images for the Vision Transformer: scikit-learn's digits and folders of PNG/JPEG files.

- :func:`load_digits_split`: the 1,797 8 x 8 handwritten digits bundled with scikit-learn
  (``sklearn.datasets.load_digits``, no download; pixel values 0-16, scaled to [0, 1]), split
  into train and test with a fixed seed, stratified by class.
- :func:`read_image_folder`: ``ROOT/CLASS/*.png|jpg|jpeg`` (one sub-folder per class, classes
  in sorted order), each image converted to grey or RGB and resized with Pillow; a file that
  Pillow cannot read is a :class:`~attnkit.errors.DataError` naming it.
- :func:`load_folder_split`: ``ROOT/train`` and ``ROOT/test`` when both exist, else one folder
  split like the digits.
- :func:`random_shift`, :func:`random_rotate_scale`: the augmentations used in training.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from attnkit.errors import DataError

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
    except (UnidentifiedImageError, OSError, ValueError) as err:
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
        raise DataError(f"{root}: image folder not found")
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


def random_shift(images: Tensor, max_shift: int, generator: torch.Generator | None = None):
    """Translate each image by its own ``(dy, dx)``, uniform in ``[-max_shift, max_shift]``,
    filling with zeros (the digits' background): ``(B, C, H, W)`` -> ``(B, C, H, W)``."""
    if max_shift <= 0:
        return images
    b, c, h, w = images.shape
    s = max_shift
    padded = torch.nn.functional.pad(images, (s, s, s, s))  # (B, C, H + 2s, W + 2s)
    dy, dx = torch.randint(-s, s + 1, (2, b, 1), generator=generator)  # (B, 1) each
    rows = torch.arange(h) + s - dy  # (B, H): output row i reads padded row i + s - dy
    cols = torch.arange(w) + s - dx  # (B, W)
    batch = torch.arange(b)[:, None, None]  # (B, 1, 1)
    out = padded.permute(0, 2, 3, 1)[batch, rows[:, :, None], cols[:, None, :]]  # (B, H, W, C)
    return out.permute(0, 3, 1, 2).contiguous()  # (B, C, H, W)


def rotate_scale(images: Tensor, degrees: Tensor, scales: Tensor) -> Tensor:
    """Rotate image ``b`` about its centre by ``degrees[b]`` (counter-clockwise as displayed,
    as ``torch.rot90``) and zoom it by ``scales[b]`` (bilinear, zeros outside):
    ``(B, C, H, W)`` -> ``(B, C, H, W)``."""
    angle = torch.deg2rad(degrees.float())  # (B,)
    cos, sin = torch.cos(angle) / scales, torch.sin(angle) / scales  # output -> input coordinates
    zero = torch.zeros_like(cos)
    theta = torch.stack([torch.stack([cos, -sin, zero], 1), torch.stack([sin, cos, zero], 1)], 1)
    grid = torch.nn.functional.affine_grid(theta, list(images.shape), align_corners=False)
    return torch.nn.functional.grid_sample(images, grid, align_corners=False)  # (B, C, H, W)


def random_rotate_scale(
    images: Tensor, max_degrees: float, max_scale: float, generator: torch.Generator | None = None
) -> Tensor:
    """:func:`rotate_scale` by angles uniform in ``[-max_degrees, max_degrees]`` and zooms
    uniform in ``[1 - max_scale, 1 + max_scale]``, one pair per image."""
    if max_degrees <= 0 and max_scale <= 0:
        return images
    u = torch.rand(2, images.size(0), generator=generator) * 2 - 1  # (2, B) uniform in [-1, 1]
    return rotate_scale(images, u[0] * max_degrees, 1 + u[1] * max_scale)
