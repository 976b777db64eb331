"""``train.border_weight``: the U-Net paper's weight map (Ronneberger et al. 2015, eq. (2))."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import yaml
from scipy import ndimage

from attnkit.apps.segmentation.border_weights import class_balance, weight_map, weight_maps
from attnkit.apps.segmentation.config import load_config
from attnkit.apps.segmentation.data import default_isbi_dir, read_mask
from attnkit.apps.segmentation.training import SegmentationTask, dice_loss, image_losses


def _slow_map(mask, w0, sigma, cells="background"):
    """Eq. (2) the direct way: every cell's distance map over the whole mask, stacked, sorted."""
    inside = mask == 0 if cells == "background" else mask != 0
    labels, n = ndimage.label(inside)
    d = np.stack([ndimage.distance_transform_edt(labels != i) for i in range(1, n + 1)])
    d = np.sort(d, axis=0)  # (n, H, W)
    term = w0 * np.exp(-((d[0] + d[1]) ** 2) / (2 * sigma**2))
    return class_balance(mask) + np.where(inside, 0.0, term)


def _membranes(seed, size=40, cells=12):
    """A binary mask of membranes (1) between random Voronoi cells (0), as ISBI's labels:
    1-pixel walls, some thickened, and a few specks."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, size, (cells, 2))
    ys, xs = np.mgrid[:size, :size]
    nearest = ((ys[..., None] - centres[:, 0]) ** 2 + (xs[..., None] - centres[:, 1]) ** 2).argmin(
        -1
    )
    walls = np.zeros((size, size), bool)
    walls[:, :-1] |= nearest[:, :-1] != nearest[:, 1:]
    walls[:-1] |= nearest[:-1] != nearest[1:]
    thick = ndimage.binary_dilation(walls) & (rng.random((size, size)) < 0.5)
    return (walls | thick | (rng.random((size, size)) < 0.01)).astype(np.uint8)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sigma", [5.0, 1.5])  # 1.5: reach 9 pixels, windows inside the mask
def test_the_map_is_the_direct_computation(seed, sigma):
    mask = _membranes(seed)
    assert ndimage.label(mask == 0)[1] >= 3
    np.testing.assert_allclose(
        weight_map(mask, 10.0, sigma), _slow_map(mask, 10.0, sigma), atol=2e-6
    )
    cells = 1 - mask  # the same cells, now the mask's foreground
    fast = weight_map(cells, 10.0, sigma, cells="foreground")
    np.testing.assert_allclose(fast, _slow_map(cells, 10.0, sigma, "foreground"), atol=2e-6)


def test_the_map_of_an_isbi_tile_is_the_direct_computation():
    path = default_isbi_dir() / "label" / "0.png"
    if not path.exists():
        pytest.skip(f"{path} not found")
    mask = read_mask(path, foreground="black")[:128, :128]  # membrane = 1
    assert ndimage.label(mask == 0)[1] > 10
    np.testing.assert_allclose(weight_map(mask), _slow_map(mask, 10.0, 5.0), atol=2e-6)


def test_the_weight_peaks_in_the_narrow_gap_between_two_cells():
    mask = np.ones((20, 40), np.uint8)  # membrane everywhere, three cells
    mask[2:18, 2:12] = mask[2:18, 14:24] = mask[2:18, 34:38] = 0  # gaps of 2 and 10 pixels
    w = weight_map(mask, 10.0, 5.0)
    w_c = class_balance(mask)[0, 0]  # of the membrane
    row, col = np.unravel_index(w.argmax(), w.shape)
    assert 2 <= row < 18 and col in (12, 13)  # in the narrow gap
    # at (10, 12): 1 pixel from the left cell, 2 from the right one
    assert w[10, 12] == pytest.approx(w_c + 10 * math.exp(-(3**2) / 50), rel=1e-6)
    assert w[10, 12] > 3 * w[10, 29]  # the wide gap's middle: d1 + d2 = 5 + 6
    assert w[10, 29] == pytest.approx(w_c + 10 * math.exp(-(11**2) / 50), rel=1e-6)
    inside = class_balance(mask)[10, 5]
    assert w[10, 5] == pytest.approx(inside) and w[10, 11] == pytest.approx(inside)


def test_the_class_term_is_the_inverse_frequency_with_mean_one():
    mask = np.zeros((8, 8), np.uint8)
    mask[:4, :4] = 1  # a quarter foreground
    w_c = class_balance(mask)
    assert np.allclose(w_c[mask == 1], 64 / (2 * 16)) and np.allclose(w_c[mask == 0], 64 / (2 * 48))
    assert w_c.mean() == pytest.approx(1.0)
    assert np.array_equal(class_balance(np.zeros((4, 4))), np.ones((4, 4)))
    assert np.array_equal(weight_map(mask, 0.0), w_c.astype(np.float32))  # one cell: no border


def test_the_weighted_loss_is_the_hand_computed_one():
    torch.manual_seed(0)
    logits = torch.randn(2, 1, 3, 3)
    masks = (torch.rand(2, 1, 3, 3) > 0.5).float()
    weights = torch.rand(2, 1, 3, 3) * 5
    z, y, w = logits.double().flatten(1), masks.double().flatten(1), weights.double().flatten(1)
    p = 1 / (1 + torch.exp(-z))
    bce = -(y * torch.log(p) + (1 - y) * torch.log(1 - p))  # (2, 9)
    dice = 1 - (2 * (p * y).sum(1) + 1) / (p.sum(1) + y.sum(1) + 1)
    expected = (w * bce).sum(1) / 9 + 0.7 * dice
    got = image_losses(logits, masks, 0.7, weights)
    torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-6)


def _config(tmp_path, **train) -> str:
    path = tmp_path / "seg.yaml"
    cfg = {
        "name": "seg",
        "task": "segmentation",
        "data": {"source": "shapes", "sizes": [8, 0, 0], "size": 32},
        "model": {"channels": [4, 8]},
        "train": {"epochs": 1, "batch_size": 4, "threads": 1, **train},
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return str(path)


def test_without_border_weight_the_loss_is_the_unweighted_one_bit_for_bit(tmp_path):
    task = SegmentationTask(load_config(_config(tmp_path, crop=16)))
    task.prepare(None, resume=False)
    assert task.weights is None
    torch.manual_seed(0)
    model = task.build_model()
    batch = task.epoch_batches(1)[0]
    images, masks = task.collate(batch)  # no third tensor
    logits = model(images).logits.float()
    bce = F.binary_cross_entropy_with_logits(logits, masks, reduction="none")
    before = (bce.flatten(1).mean(1) + dice_loss(logits, masks)).sum()  # the loss until now
    assert torch.equal(task.loss(model, batch).total, before)


@pytest.mark.parametrize("train", [{"crop": 16}, {"crop": 16, "elastic": 4.0}, {}])
def test_the_maps_move_with_the_masks(tmp_path, train):
    task = SegmentationTask(load_config(_config(tmp_path, border_weight=10.0, **train)))
    task.prepare(None, resume=False)
    data = task.sets["train"]
    torch.testing.assert_close(task.weights, weight_maps(data.masks, 10.0, 5.0))
    assert task.weights.std() > 0.5  # not a constant
    data.images = task.weights.clone()  # the map as the image: both must come out the same
    torch.manual_seed(0)
    model = task.build_model()
    seen = set()
    for batch in task.epoch_batches(1) + task.epoch_batches(2):
        images, masks, weights = task.collate(batch)
        assert torch.equal(weights, images) and weights.shape == masks.shape
        if not train.get("elastic"):  # flipped, turned and cropped as the masks are
            full = batch.apply(data.masks[batch.index])  # (b, 1, 32, 32)
            side, (top, left) = masks.shape[-1], _offset(batch, 32, train.get("crop", 0))
            assert torch.equal(masks, full[..., top : top + side, left : left + side])
            full = batch.apply(task.weights[batch.index])
            assert torch.equal(weights, full[..., top : top + side, left : left + side])
        seen.add((batch.turns, batch.flip))
        expected = image_losses(model(images).logits.float(), masks, 1.0, weights).sum()
        torch.testing.assert_close(task.loss(model, batch).total, expected)
    assert len(seen) > 1  # flips and turns were drawn


def _offset(batch, side, crop):
    if not crop:
        return 0, 0
    return int(batch.at[0] * (side - crop + 1)), int(batch.at[1] * (side - crop + 1))


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("border_weight", -1.0, "border_weight must be finite and at least 0"),
        ("border_weight", ".inf", "border_weight must be finite"),
        ("border_sigma", 0.0, "border_sigma must be finite and positive"),
        ("border_cells", "nuclei", "border_cells"),
    ],
)
def test_bad_border_settings_are_refused_naming_the_field(tmp_path, field, value, message):
    value = float("inf") if value == ".inf" else value
    with pytest.raises(Exception, match=message):
        load_config(_config(tmp_path, **{field: value}))
