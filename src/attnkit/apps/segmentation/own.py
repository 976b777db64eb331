"""A user's own test set (``attnkit evaluate RUN --src IMAGES --ref MASKS``): grey PNG images
with their binary PNG masks.

``--src`` is a folder of PNG images (sorted by name, ``2.png`` before ``10.png``) or a text
file listing them one a line, relative to its folder (:func:`attnkit.textfiles.list_files`);
``--ref`` is a folder holding each image's mask under the image's file name, or a list of
mask files in the same order. Masks are read as the run's ``data.foreground`` says. Every
fault names the file (and the list's line): a missing mask, a mask without its image (two
folders), unequal lists, an unreadable PNG, a mask of other size than its image, a mask of
more than two values, images of different sizes.
"""

from __future__ import annotations

from pathlib import Path

from attnkit.apps.segmentation.data import Sample, read_image, read_mask
from attnkit.apps.segmentation.sets import ImageMasks
from attnkit.errors import DataError
from attnkit.textfiles import Listed, check_paired, list_files, natural_key, read_listed

PNG = (".png",)


def own_set(src: str | Path, ref: str | Path, foreground: str = "white") -> ImageMasks:
    """The images of ``src`` with their masks from ``ref`` (module docstring), one size."""
    src, ref = Path(src), Path(ref)
    images = list_files(src, PNG)
    masks = _masks_in(ref, images, src) if ref.is_dir() else list_files(ref, PNG, "mask")
    units = ("images" if src.is_dir() else "lines", "lines")
    check_paired(images, masks, src, ref, "the images and their masks", units)
    samples = []
    for image, mask in zip(images, masks, strict=True):
        (pixels,) = read_listed([image], read_image)  # (1, H, W)
        (binary,) = read_listed([mask], lambda p: read_mask(p, foreground))  # (H, W)
        if binary.shape != pixels.shape[1:]:
            (h, w), (mh, mw) = pixels.shape[1:], binary.shape
            at = f"{mask.where}: " if mask.where else ""
            raise DataError(
                f"{at}{mask.path}: mask is {mw}x{mh} (width x height), its image "
                f"{image.path} is {w}x{h}"
            )
        samples.append(Sample(pixels, binary[None], image.path.name))
    return ImageMasks.from_samples(samples, str(src))


def _masks_in(folder: Path, images: list[Listed], src: Path) -> list[Listed]:
    """Each image's mask ``folder/NAME`` (the image's file name); a missing one is named with
    its image, and with two folders, a mask without its image is named too."""
    masks = []
    for image in images:
        mask = folder / image.path.name
        if not mask.is_file():
            at = f"{image.where}: " if image.where else ""
            raise DataError(f"{at}{mask}: no mask for the image {image.path}")
        masks.append(Listed(mask, image.where))
    if src.is_dir():
        named = {image.path.name for image in images}
        extra = [p for p in folder.iterdir() if p.suffix.lower() in PNG and p.name not in named]
        if extra:
            first = min(extra, key=lambda p: natural_key(p.name))
            raise DataError(f"{first}: a mask without its image {src / first.name}")
    return masks
