"""``train.crop``: training on random tiles of the images (the U-Net paper trains on tiles)."""

from __future__ import annotations

import pytest
import torch
import yaml

from attnkit.apps.segmentation.config import load_config
from attnkit.apps.segmentation.training import SegmentationTask, image_losses


def _config(tmp_path, **train) -> str:
    path = tmp_path / "seg.yaml"
    cfg = {
        "name": "seg",
        "task": "segmentation",
        "data": {"source": "shapes", "sizes": [8, 4, 4], "size": 32},
        "model": {"channels": [4, 8]},
        "train": {"epochs": 1, "batch_size": 4, "threads": 1, **train},
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return str(path)


class Recorder(torch.nn.Module):
    """The network, keeping what it was given."""

    def __init__(self, net) -> None:
        super().__init__()
        self.net, self.seen = net, []

    def forward(self, x):
        self.seen.append(x)
        return self.net(x)


def _offsets(tile, full):
    """Every (top, left) where ``tile (b, C, s, s)`` is a tile of ``full (b, C, H, W)``."""
    s, (h, w) = tile.shape[-1], full.shape[-2:]
    return [
        (y, x)
        for y in range(h - s + 1)
        for x in range(w - s + 1)
        if torch.equal(full[..., y : y + s, x : x + s], tile)
    ]


def test_the_loss_sees_one_tile_of_image_and_mask_at_the_same_place(tmp_path):
    task = SegmentationTask(load_config(_config(tmp_path, crop=16)))
    task.prepare(None, resume=False)
    train = task.sets["train"]
    train.images = torch.rand_like(train.images)  # every tile of an image is different
    torch.manual_seed(0)
    model = Recorder(task.build_model())
    places = set()
    for batch in task.epoch_batches(1) + task.epoch_batches(2):
        total = task.loss(model, batch).total
        tile = model.seen[-1]
        assert tile.shape[-2:] == (16, 16)
        full_images = batch.apply(train.images[batch.index])  # (b, 1, 32, 32)
        ((top, left),) = _offsets(tile, full_images)
        masks = batch.apply(train.masks[batch.index])[..., top : top + 16, left : left + 16]
        expected = image_losses(model.net(tile).logits.float(), masks, 1.0).sum()
        torch.testing.assert_close(total, expected)
        places.add((top, left))
    assert len(places) == 4  # each batch its own place


def test_without_crop_the_whole_image_is_seen(tmp_path):
    task = SegmentationTask(load_config(_config(tmp_path)))
    task.prepare(None, resume=False)
    model = Recorder(task.build_model())
    task.loss(model, task.epoch_batches(1)[0])
    assert model.seen[0].shape[-2:] == (32, 32)


@pytest.mark.parametrize(
    "crop, message",
    [(15, "train.crop 15 must be a multiple of 2"), (-2, "crop must be at least 0")],
)
def test_bad_crops_are_refused_naming_the_field(tmp_path, crop, message):
    with pytest.raises(Exception, match=message):
        load_config(_config(tmp_path, crop=crop))


def test_a_crop_larger_than_the_images_is_refused(tmp_path):
    task = SegmentationTask(load_config(_config(tmp_path, crop=64)))
    task.prepare(None, resume=False)
    with pytest.raises(ValueError, match="train.crop 64 is larger than a 32 x 32"):
        task.loss(task.build_model(), task.epoch_batches(1)[0])
