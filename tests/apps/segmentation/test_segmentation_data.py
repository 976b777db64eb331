"""The segmentation app's data: the shapes generator, PNG pair reading and the ISBI EM split."""

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from attnkit.apps.segmentation import data
from attnkit.apps.segmentation.data import default_isbi_dir, load_isbi, read_pairs
from attnkit.apps.segmentation.shapes import (
    BACKGROUND,
    CLUTTER,
    DISTRACTOR,
    TARGET,
    generate_scenes,
    generate_shapes,
)
from attnkit.errors import DataError

ISBI = Path("/work/shared/data/isbi-em")
needs_isbi = pytest.mark.skipif(not (ISBI / "label").is_dir(), reason=f"{ISBI} is absent")


def test_generator_is_deterministic_in_seed_and_typed():
    images, masks = generate_shapes(6, 48, seed=3)
    again, again_masks = generate_shapes(6, 48, seed=3)
    assert np.array_equal(images, again) and np.array_equal(masks, again_masks)
    assert not np.array_equal(images, generate_shapes(6, 48, seed=4)[0])
    first, first_masks = generate_shapes(2, 48, seed=3)  # a prefix of the larger set
    assert np.array_equal(first, images[:2]) and np.array_equal(first_masks, masks[:2])
    assert images.shape == masks.shape == (6, 1, 48, 48)
    assert images.dtype == np.float32 and masks.dtype == np.uint8
    assert images.min() >= 0.0 and images.max() <= 1.0
    assert set(np.unique(masks)) == {0, 1}
    assert generate_shapes(0, 32)[0].shape == (0, 1, 32, 32)
    for bad in ({"n": -1}, {"size": 8}, {"noise": -0.1}, {"clutter": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            generate_shapes(**{"n": 2, **bad})


def test_noise_and_clutter_parameters():
    clean = generate_scenes(4, 64, seed=1, noise=0.0, clutter=0)
    assert not (clean.labels == CLUTTER).any()
    objects = clean.images[clean.labels != BACKGROUND]
    assert objects.min() >= 0.6 and objects.max() <= 0.85  # no noise: the levels drawn
    for noise in (0.03, 0.1):
        noisy = generate_scenes(4, 64, seed=1, noise=noise, clutter=6)
        assert (noisy.labels == CLUTTER).any()
        residual = noisy.images - clean.images  # same scene, same objects: noise (+ clutter)
        calm = (noisy.labels == clean.labels) & (noisy.images > 0.05) & (noisy.images < 0.95)
        assert residual[calm].std() == pytest.approx(noise, rel=0.15)


def test_targets_and_distractors_look_alike_in_intensity():
    scenes = generate_scenes(100, 64, seed=0)
    target = scenes.images[scenes.labels == TARGET].mean()
    distractor = scenes.images[scenes.labels == DISTRACTOR].mean()
    clutter = scenes.images[scenes.labels == CLUTTER].mean()
    background = scenes.images[scenes.labels == BACKGROUND].mean()
    assert abs(target - distractor) < 0.1 and abs(target - clutter) < 0.1
    assert target - background > 0.3  # every object stands out from the background
    # so no threshold on intensity separates targets from distractors
    truth = scenes.masks.astype(bool)
    best = max(
        2 * (truth & (scenes.images > t)).sum() / (truth.sum() + (scenes.images > t).sum())
        for t in np.linspace(0.0, 1.0, 51)
    )
    assert best < 0.8


def _roundness(component: np.ndarray) -> float:
    """IoU of a component with the ellipse of its second moments (1 for a solid ellipse)."""
    ys, xs = np.nonzero(component)
    centre = np.array([xs.mean(), ys.mean()])
    cov = np.cov(np.stack([xs, ys]), bias=True) + np.eye(2) / 12  # + a pixel's own spread
    yy, xx = np.mgrid[0 : component.shape[0], 0 : component.shape[1]]
    d = np.stack([xx - centre[0], yy - centre[1]], -1)
    ellipse = np.einsum("...i,ij,...j->...", d, np.linalg.inv(cov), d) <= 4
    return (ellipse & component).sum() / (ellipse | component).sum()


def test_masks_cover_only_the_round_targets():
    scenes = generate_scenes(60, 64, seed=2)
    assert np.array_equal(scenes.masks, (scenes.labels == TARGET).astype(np.uint8))
    eight = np.ones((3, 3))
    target_round, distractor_round = [], []
    for mask, labels in zip(scenes.masks[:, 0], scenes.labels[:, 0], strict=True):
        parts, count = ndimage.label(mask, structure=eight)
        others, other_count = ndimage.label(labels == DISTRACTOR, structure=eight)
        assert 1 <= count and 1 <= other_count and count + other_count <= 5
        target_round += [_roundness(parts == k) for k in range(1, count + 1)]
        distractor_round += [_roundness(others == k) for k in range(1, other_count + 1)]
    assert min(target_round) > 0.9  # discs and ellipses
    assert np.median(distractor_round) < 0.85  # squares, triangles, bars
    assert np.mean(np.array(distractor_round) > 0.9) < 0.1


def _png(path: Path, array) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.asarray(array)).save(path)
    return path


def _pairs(tmp_path: Path, names=("2", "10"), shape=(4, 5)) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    for name in names:
        _png(tmp_path / "img" / f"{name}.png", rng.integers(0, 256, shape, dtype=np.uint8))
        _png(tmp_path / "msk" / f"{name}.png", (rng.random(shape) < 0.5).astype(np.uint8) * 255)
    return tmp_path / "img", tmp_path / "msk"


def test_read_pairs_reads_matched_pairs_in_natural_order(tmp_path):
    images, masks = _pairs(tmp_path)
    samples = read_pairs(images, masks)
    assert [s.name for s in samples] == ["2.png", "10.png"]
    pixels = np.asarray(Image.open(images / "10.png"))
    mask = np.asarray(Image.open(masks / "10.png"))
    assert samples[1].image.shape == (1, 4, 5) and samples[1].image.dtype == np.float32
    assert np.allclose(samples[1].image[0], pixels / 255.0)
    assert samples[1].mask.dtype == np.uint8 and np.array_equal(samples[1].mask[0], mask == 255)
    black = read_pairs(images, masks, foreground="black")
    assert np.array_equal(black[1].mask[0], mask == 0)
    with pytest.raises(ValueError, match="foreground must be 'white' or 'black'"):
        read_pairs(images, masks, foreground="grey")


def test_read_pairs_sixteen_bit_and_zero_one_masks(tmp_path):
    _png(tmp_path / "i" / "a.png", np.array([[0, 65535], [32768, 1000]], dtype=np.uint16))
    _png(tmp_path / "m" / "a.png", np.array([[0, 1], [1, 0]], dtype=np.uint8))
    (sample,) = read_pairs(tmp_path / "i", tmp_path / "m")
    assert np.allclose(sample.image[0], [[0, 1], [32768 / 65535, 1000 / 65535]])
    assert sample.mask[0].tolist() == [[0, 1], [1, 0]]
    _png(tmp_path / "m" / "a.png", np.full((2, 2), 255, np.uint8))  # one value: all white
    assert read_pairs(tmp_path / "i", tmp_path / "m")[0].mask.all()


def _error(*args, **kwargs) -> str:
    with pytest.raises(DataError) as caught:
        read_pairs(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_read_pairs_folder_errors(tmp_path):
    images, masks = _pairs(tmp_path)
    assert _error(tmp_path / "nope", masks).startswith(f"{tmp_path / 'nope'}: image folder not")
    assert _error(images, tmp_path / "nope").startswith(f"{tmp_path / 'nope'}: mask folder not")
    _png(tmp_path / "file.png", np.zeros((2, 2), np.uint8))
    assert _error(tmp_path / "file.png", masks).startswith(f"{tmp_path / 'file.png'}: is a file")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no images here")
    message = _error(tmp_path / "empty", masks)
    assert message.startswith(f"{tmp_path / 'empty'}: no PNG files")


def test_read_pairs_unmatched_files(tmp_path):
    images, masks = _pairs(tmp_path, names=("1", "2", "3"))
    (masks / "2.png").unlink()
    (masks / "3.png").unlink()
    message = _error(images, masks)
    assert message.startswith(f"{images / '2.png'}: no mask named 2.png in {masks}")
    assert "(and 1 more: 3.png)" in message
    (images / "2.png").unlink()
    (images / "3.png").unlink()
    _png(masks / "9.png", np.zeros((4, 5), np.uint8))
    message = _error(images, masks)
    assert message.startswith(f"{masks / '9.png'}: no image named 9.png in {images}")


def test_read_pairs_size_mismatch_names_both_sizes(tmp_path):
    images, masks = _pairs(tmp_path, names=("a",))
    _png(masks / "a.png", np.zeros((6, 5), np.uint8))
    message = _error(images, masks)
    assert message.startswith(f"{masks / 'a.png'}: mask is 5x6 (width x height)")
    assert f"its image {images / 'a.png'} is 5x4" in message


def test_read_pairs_non_binary_mask_lists_its_values(tmp_path):
    images, masks = _pairs(tmp_path, names=("a",))
    _png(masks / "a.png", np.array([[0, 128, 255, 0, 0]] * 4, dtype=np.uint8))
    message = _error(images, masks)
    assert message.startswith(f"{masks / 'a.png'}: values 0, 128, 255 (3 distinct)")
    assert "a mask must hold two values" in message


def test_read_pairs_unreadable_png(tmp_path):
    images, masks = _pairs(tmp_path, names=("a",), shape=(64, 64))
    whole = (images / "a.png").read_bytes()
    (images / "a.png").write_bytes(whole[: len(whole) // 2])  # truncated
    assert _error(images, masks).startswith(f"{images / 'a.png'}: cannot read this PNG")
    (images / "a.png").write_bytes(b"not an image at all")
    assert _error(images, masks).startswith(f"{images / 'a.png'}: cannot read this PNG")
    Image.fromarray(np.zeros((64, 64), np.uint8)).save(images / "a.png", format="JPEG")
    assert _error(images, masks).startswith(f"{images / 'a.png'}: not a PNG file")
    with pytest.raises(DataError, match="is a directory"):
        data.read_image(images)
    with pytest.raises(DataError, match="file not found"):
        data.read_image(images / "absent.png")
    _png(images / "grey.png", np.array([[0, 51], [255, 102]], np.uint8))
    assert np.allclose(data.read_image(images / "grey.png"), [[[0, 0.2], [1, 0.4]]])


def _fake_isbi(root: Path, slices=range(30)) -> Path:
    for i in slices:
        _png(root / "image" / f"{i}.png", np.full((8, 8), i, np.uint8))
        label = np.full((8, 8), 255, np.uint8)
        label[:, :2] = 0  # membrane: a quarter of the pixels
        _png(root / "label" / f"{i}.png", label)
    return root


def test_load_isbi_split_and_resize_on_a_fake_folder(tmp_path):
    root = _fake_isbi(tmp_path / "isbi-em")
    train, test = load_isbi(root, "train"), load_isbi(root, "test")
    assert [s.name for s in train] == [f"{i}.png" for i in range(24)]
    assert [s.name for s in test] == [f"{i}.png" for i in range(24, 30)]
    assert len(load_isbi(root, "all")) == 30
    assert test[0].image[0, 0, 0] == pytest.approx(24 / 255)
    assert test[0].mask[0, :, :2].all() and not test[0].mask[0, :, 2:].any()  # membrane = 1
    small = load_isbi(root, "test", size=4)[0]
    assert small.image.shape == small.mask.shape == (1, 4, 4)
    assert small.mask[0].tolist() == [[1, 0, 0, 0]] * 4
    with pytest.raises(ValueError, match="ISBI split must be"):
        load_isbi(root, "dev")
    with pytest.raises(DataError, match="ATTNKIT_DATA_DIR"):
        load_isbi(tmp_path / "absent", "train")
    partial = _fake_isbi(tmp_path / "partial", range(24))
    with pytest.raises(DataError, match=r"slice\(s\) 24.png, 25.png, .* not found"):
        load_isbi(partial, "test")


def test_default_isbi_dir(monkeypatch):
    monkeypatch.setenv("ATTNKIT_DATA_DIR", "/data/here")
    assert default_isbi_dir() == Path("/data/here/isbi-em")
    monkeypatch.delenv("ATTNKIT_DATA_DIR")
    assert default_isbi_dir() == Path("../shared/data/isbi-em")


@needs_isbi
def test_isbi_membrane_is_the_minority_foreground():
    train, test = load_isbi(ISBI, "train"), load_isbi(ISBI, "test")
    assert len(train) == 24 and len(test) == 6
    assert train[0].image.shape == train[0].mask.shape == (1, 512, 512)
    train_fraction = np.mean([s.mask.mean() for s in train])  # measured 0.225
    test_fraction = np.mean([s.mask.mean() for s in test])  # measured 0.196
    assert 0.20 < train_fraction < 0.25 and 0.17 < test_fraction < 0.23
    for s in test:  # membranes are the dark pixels of an EM slice
        assert s.image[s.mask == 1].mean() < s.image[s.mask == 0].mean() - 0.1
    small = load_isbi(ISBI, "test", size=128)
    assert small[0].image.shape == (1, 128, 128) and set(np.unique(small[0].mask)) <= {0, 1}
    assert abs(np.mean([s.mask.mean() for s in small]) - test_fraction) < 0.02


def test_a_png_too_large_to_open_names_the_file_and_its_size(tmp_path):
    """A PNG whose header declares 30000 x 30000 pixels: Pillow's DecompressionBombError
    becomes a DataError naming the file and the declared pixels, in training and predict."""
    images, masks = _pairs(tmp_path, names=("a",))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0)  # grey, 8 bits
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")
    (images / "a.png").write_bytes(png)
    message = _error(images, masks)  # training reads pairs
    assert message.startswith(f"{images / 'a.png'}: image too large to read"), message
    assert "900000000 pixels" in message
    with pytest.raises(DataError, match="900000000 pixels"):
        data.read_image(images / "a.png")  # predict reads one image
