"""Issue 35 item 5 for segmentation: ``evaluate RUN --src IMAGES --ref MASKS`` scores a user's
own PNG images against their masks (a folder under the same file names, or a list) with the
split's scores (Dice, IoU, ...); faults are named with the file and line."""

import json

import numpy as np
import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

import attnkit
from attnkit.apps.segmentation.own import own_set
from attnkit.apps.segmentation.shapes import generate_shapes
from attnkit.cli import app

NAMES = ["2.png", "10.png", "a.png"]  # natural order: 2 before 10


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny Attention U-Net trained for one epoch on 16 generated 32 x 32 images."""
    tmp = tmp_path_factory.mktemp("seg-own")
    cfg = {
        "task": "segmentation",
        "data": {"source": "shapes", "sizes": [16, 0, 0], "size": 32},
        "model": {"channels": [4, 8]},
        "train": {"epochs": 1, "batch_size": 8},
    }
    (tmp / "c.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(tmp / "c.yaml"), "-o", str(tmp / "run")])
    assert result.exit_code == 0, result.output
    return tmp / "run"


def _pairs(root, side=32, names=NAMES):
    """Generated images and masks as grey PNGs ``root/images/NAME``, ``root/masks/NAME``."""
    images, masks = generate_shapes(len(names), side, seed=7)
    for kind in ("images", "masks"):
        (root / kind).mkdir(parents=True, exist_ok=True)
    for name, image, mask in zip(names, images, masks, strict=True):
        Image.fromarray(np.rint(image[0] * 255).astype(np.uint8)).save(root / "images" / name)
        Image.fromarray(mask[0] * 255).save(root / "masks" / name)
    return root / "images", root / "masks"


def _evaluate(run, src, ref, *extra):
    args = ["evaluate", str(run), "--src", str(src), "--ref", str(ref), *extra]
    return CliRunner().invoke(app, args)


def test_own_images_and_masks_score_like_a_split(run, tmp_path):
    images, masks = _pairs(tmp_path)
    result = _evaluate(run, images, masks, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["split"] == str(images) and scores["count"] == 3
    model = attnkit.load_run(run, device="cpu")
    read = [np.asarray(Image.open(images / n), dtype=np.float32)[None] / 255 for n in NAMES]
    pred = model.predict(np.stack(read)).logits.numpy() > 0.5  # (3, 1, 32, 32)
    truth = np.stack([np.asarray(Image.open(masks / n))[None] > 0 for n in NAMES])
    tp, fp, fn = (pred & truth).sum(), (pred & ~truth).sum(), (~pred & truth).sum()
    assert scores["metrics"]["dice"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert scores["metrics"]["iou"] == pytest.approx(tp / (tp + fp + fn))
    image_list, mask_list = tmp_path / "images.txt", tmp_path / "masks.txt"
    image_list.write_text("".join(f"images/{n}\n" for n in NAMES), encoding="utf-8")
    mask_list.write_text("".join(f"masks/{n}\n" for n in NAMES), encoding="utf-8")
    for src, ref in ((image_list, mask_list), (image_list, masks)):
        listed = _evaluate(run, src, ref, "--json")
        assert listed.exit_code == 0, listed.output
        assert json.loads(listed.stdout)["metrics"] == scores["metrics"]


def test_each_image_gets_its_own_mask_in_name_order(tmp_path):
    images, masks = _pairs(tmp_path)
    want_images, want_masks = generate_shapes(3, 32, seed=7)
    found = own_set(images, masks)
    assert found.names == NAMES
    assert np.array_equal(found.masks.numpy(), want_masks.astype(np.float32))
    assert np.allclose(found.images.numpy(), want_images, atol=0.5 / 255 + 1e-6)
    listed = tmp_path / "masks.txt"  # a list pairs line by line, whatever the names
    listed.write_text("".join(f"masks/{n}\n" for n in NAMES[::-1]), encoding="utf-8")
    swapped = own_set(images, listed)
    assert np.array_equal(swapped.masks.numpy(), want_masks[::-1].astype(np.float32))
    black = own_set(images, masks, foreground="black")
    assert np.array_equal(black.masks.numpy(), 1 - want_masks.astype(np.float32))


def _fails(run, src, ref) -> str:
    result = _evaluate(run, src, ref)
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


def test_bad_own_images_and_masks_are_named(run, tmp_path):
    images, masks = _pairs(tmp_path)
    (masks / "a.png").rename(masks / "b.png")
    found = _fails(run, images, masks)
    assert f"{masks / 'a.png'}: no mask for the image {images / 'a.png'}" in found
    (masks / "b.png").rename(masks / "a.png")
    Image.fromarray(np.zeros((32, 32), np.uint8)).save(masks / "extra.png")
    found = _fails(run, images, masks)
    assert f"{masks / 'extra.png'}: a mask without its image {images / 'extra.png'}" in found
    (masks / "extra.png").unlink()
    image_list, mask_list = tmp_path / "images.txt", tmp_path / "masks.txt"
    image_list.write_text("images/2.png\nimages/a.png\n", encoding="utf-8")
    mask_list.write_text("masks/2.png\n", encoding="utf-8")
    assert f"{image_list} has 2 lines and {mask_list} 1:" in _fails(run, image_list, mask_list)
    Image.fromarray(np.zeros((16, 32), np.uint8)).save(masks / "a.png")
    found = _fails(run, image_list, masks)
    assert f"{image_list}, line 2: {masks / 'a.png'}: mask is 32x16 (width x height)" in found
    Image.fromarray(np.arange(32 * 32, dtype=np.uint8).reshape(32, 32)).save(masks / "a.png")
    found = _fails(run, image_list, masks)
    assert f"{image_list}, line 2: {masks / 'a.png'}: values 0, 1, 2" in found
    (masks / "a.png").write_bytes(b"not a png")
    assert f"{image_list}, line 2: {masks / 'a.png'}: cannot read this PNG" in (
        _fails(run, image_list, masks)
    )


def test_own_images_that_do_not_fit_the_model_are_named(run, tmp_path):
    images, masks = _pairs(tmp_path / "odd", side=31, names=["0.png"])
    found = _fails(run, images, masks)
    assert f"{images} (0.png): images are 31x31 (width x height); both sides must be" in found
    images, masks = _pairs(tmp_path / "mixed", side=32, names=["0.png"])
    _pairs(tmp_path / "mixed", side=16, names=["1.png"])
    found = _fails(run, images, masks)
    assert f"{images}: images of different sizes" in found
