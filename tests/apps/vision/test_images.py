"""Image data: the digits split, folders of PNG/JPEG files, augmentation, epoch batches."""

import numpy as np
import pytest
import torch
from PIL import Image
from sklearn.datasets import load_digits

from attnkit.apps.vision.augment import random_rotate_scale, random_shift, rotate_scale
from attnkit.apps.vision.config import ImageTrainConfig
from attnkit.apps.vision.data import (
    load_digits_split,
    load_folder_split,
    read_image,
    read_image_folder,
)
from attnkit.apps.vision.training import epoch_batches
from attnkit.errors import DataError


def test_digits_split_is_fixed_stratified_and_complete():
    split = load_digits_split()
    train, test = split["train"], split["test"]
    assert (len(train), len(test)) == (1437, 360)
    assert train.images.shape == (1437, 1, 8, 8) and train.images.dtype == torch.float32
    assert 0.0 <= float(train.images.min()) and float(train.images.max()) == 1.0
    again = load_digits_split()
    assert torch.equal(again["test"].images, test.images)
    assert not torch.equal(load_digits_split(seed=1)["test"].labels, test.labels)
    # every digit once: the two parts together are scikit-learn's images / 16
    ref = load_digits()
    pooled = torch.cat([train.images, test.images]).reshape(-1, 64).double() * 16
    ref_rows = {tuple(r) for r in ref.data.tolist()}
    assert len({tuple(r) for r in pooled.tolist()} & ref_rows) == len(ref_rows)
    # stratified: each class' test share is within one image of 20 %
    for c in range(10):
        n = int((ref.target == c).sum())
        assert abs(int((test.labels == c).sum()) - 0.2 * n) <= 1
    assert train.names == [str(i) for i in range(10)]


def _png(path, array, mode="L"):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.asarray(array, dtype=np.uint8), mode=mode).save(path)


def test_image_folder_reads_classes_pixels_and_skips_other_files(tmp_path):
    dark = np.zeros((4, 4))
    light = np.full((4, 4), 255)
    light[0, 0] = 51  # 0.2 after scaling
    _png(tmp_path / "b_light" / "1.png", light)
    _png(tmp_path / "b_light" / "2.PNG", light)
    _png(tmp_path / "a_dark" / "x.png", dark)
    (tmp_path / "a_dark" / "notes.txt").write_text("not an image")
    data = read_image_folder(tmp_path, image_size=4)
    assert data.names == ["a_dark", "b_light"]  # sorted sub-folder names
    assert data.labels.tolist() == [0, 1, 1]
    assert data.images.shape == (3, 1, 4, 4)
    assert float(data.images[0].max()) == 0.0
    assert data.images[1, 0, 0, 0].item() == pytest.approx(0.2)
    assert data.images[1, 0, 1, 1].item() == 1.0


def test_image_folder_resizes_and_reads_rgb_jpeg(tmp_path):
    rgb = np.zeros((16, 16, 3))
    rgb[..., 0] = 255  # pure red
    path = tmp_path / "red" / "r.jpg"
    path.parent.mkdir()
    Image.fromarray(rgb.astype(np.uint8), mode="RGB").save(path, quality=95)
    image = read_image(path, image_size=8, channels=3)
    assert image.shape == (3, 8, 8)
    np.testing.assert_allclose(image.mean(axis=(1, 2)), [1.0, 0.0, 0.0], atol=0.03)
    grey = read_image(path, image_size=8, channels=1)  # ITU-R 601-2 luma: 299/1000 of red
    np.testing.assert_allclose(grey, 0.299, atol=0.02)


def test_unreadable_image_is_named(tmp_path):
    _png(tmp_path / "cat" / "good.png", np.zeros((4, 4)))
    bad = tmp_path / "cat" / "broken.png"
    bad.write_bytes(b"\x89PNG not really")
    with pytest.raises(DataError, match=r"broken\.png: cannot read this image"):
        read_image_folder(tmp_path, image_size=4)


def test_folder_errors(tmp_path):
    with pytest.raises(DataError, match="image folder not found"):
        read_image_folder(tmp_path / "missing", 4)
    (tmp_path / "a-file.png").write_bytes(b"x")
    with pytest.raises(DataError, match="a-file.png: is a file, expected a folder"):
        read_image_folder(tmp_path / "a-file.png", 4)
    (tmp_path / "a-file.png").unlink()
    with pytest.raises(DataError, match="no class sub-folders"):
        read_image_folder(tmp_path, 4)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no .png, .jpg or .jpeg files"):
        read_image_folder(tmp_path, 4)


def test_folder_split_uses_train_and_test_folders(tmp_path):
    for split, n in (("train", 3), ("test", 2)):
        for name, value in (("off", 0), ("on", 255)):
            for i in range(n):
                _png(tmp_path / split / name / f"{i}.png", np.full((4, 4), value))
    data = load_folder_split(tmp_path, image_size=4)
    assert (len(data["train"]), len(data["test"])) == (6, 4)
    assert data["test"].labels.tolist() == [0, 0, 1, 1]
    assert data["test"].images[2:].min() == 1.0


def _shifted(image, dy, dx):
    """NumPy reference: translate by (dy, dx), zeros where nothing moves in."""
    h, w = image.shape[-2:]
    out = np.zeros_like(image)
    for i in range(h):
        for j in range(w):
            if 0 <= i - dy < h and 0 <= j - dx < w:
                out[..., i, j] = image[..., i - dy, j - dx]
    return out


def test_random_shift_is_a_translation():
    images = torch.rand(40, 2, 5, 6)
    out = random_shift(images, 1, torch.Generator().manual_seed(3))
    seen = set()
    for b in range(40):
        x, y = images[b].numpy(), out[b].numpy()
        found = [
            (dy, dx)
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if np.array_equal(_shifted(x, dy, dx), y)
        ]
        assert len(found) == 1
        seen.add(found[0])
    assert len(seen) == 9  # all nine shifts occur
    assert random_shift(images, 0) is images


def test_rotate_scale_against_rot90_and_a_zoom():
    x = torch.rand(3, 2, 6, 6)
    out = rotate_scale(x, torch.tensor([90.0, -90.0, 0.0]), torch.ones(3))
    torch.testing.assert_close(out[0], torch.rot90(x[0], 1, (1, 2)))  # counter-clockwise
    torch.testing.assert_close(out[1], torch.rot90(x[1], -1, (1, 2)))
    torch.testing.assert_close(out[2], x[2])
    square = torch.zeros(1, 1, 8, 8)
    square[..., 2:6, 2:6] = 1.0  # the middle 4 x 4
    zoomed = rotate_scale(square, torch.zeros(1), torch.tensor([2.0]))[0, 0]
    assert zoomed[1:7, 1:7].min() == 1.0  # twice as large: fills the image but for its rim
    shrunk = rotate_scale(square, torch.zeros(1), torch.tensor([0.5]))[0, 0]
    assert shrunk[3:5, 3:5].min() == 1.0 and shrunk[:2].max() == 0.0
    g = torch.Generator().manual_seed(0)
    assert random_rotate_scale(x, 0.0, 0.0, g) is x
    moved = random_rotate_scale(x, 30.0, 0.2, g)
    assert moved.shape == x.shape and not torch.allclose(moved, x)


def test_epoch_batches_are_pure_cover_the_set_and_keep_the_old_draws():
    """A pure function of (seed, epoch), as exact resume needs; drawn in the order of the loop
    before the engine (shuffle, then per batch: shifts, then rotations and zooms)."""
    t = ImageTrainConfig(batch_size=64, max_shift=1, max_rotation=10.0, max_scale=0.1, seed=3)
    first, again = epoch_batches(100, t, 2), epoch_batches(100, t, 2)
    assert [b.index.numel() for b in first] == [64, 36]
    assert torch.equal(torch.cat([b.index for b in first]).sort().values, torch.arange(100))
    x = torch.rand(100, 1, 8, 8)
    for a, b in zip(first, again, strict=True):
        assert torch.equal(a.index, b.index)
        assert torch.equal(a.augment.apply(x[a.index]), b.augment.apply(x[b.index]))
    other = epoch_batches(100, t, 3)
    assert not torch.equal(other[0].index, first[0].index)
    g = torch.Generator().manual_seed(3 * 100_003 + 1)  # epoch 2, counted from 0 before
    order = torch.randperm(100, generator=g)
    for start, batch in zip((0, 64), first, strict=True):
        index = order[start : start + 64]
        old = random_rotate_scale(random_shift(x[index], 1, g), 10.0, 0.1, g)
        assert torch.equal(batch.index, index)
        assert torch.equal(batch.augment.apply(x[index]), old)
    plain = epoch_batches(100, ImageTrainConfig(max_shift=0), 1)[0]
    assert plain.augment.apply(x) is x  # nothing drawn, nothing changed
