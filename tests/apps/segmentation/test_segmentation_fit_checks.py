"""Issue 35, messages: a folder of images that cannot fit the model (grey images and
``in_channels: 3``; sides the U-Net cannot halve) is refused before a model is built, in one
line naming the folder and an image (it failed inside the model's forward pass)."""

import numpy as np
import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

from attnkit.cli import app


def _folder(root, side: int) -> None:
    for kind in ("images", "masks"):
        (root / kind).mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i in range(3):
        Image.fromarray(rng.integers(0, 256, (side, side), dtype=np.uint8)).save(
            root / "images" / f"{i}.png"
        )
        mask = np.zeros((side, side), dtype=np.uint8)
        mask[: side // 2] = 255
        Image.fromarray(mask).save(root / "masks" / f"{i}.png")


@pytest.mark.parametrize(
    ("side", "model", "message"),
    [
        (32, {"channels": [4, 8], "in_channels": 3}, "images have 1 channel(s), model.in_ch"),
        (30, {"channels": [4, 8, 16]}, "images are 30x30 (width x height); both sides must be"),
    ],
)
def test_images_that_cannot_fit_the_model_are_named(tmp_path, side, model, message):
    _folder(tmp_path, side)
    cfg = {
        "task": "segmentation",
        "data": {"source": "folder", "train_images": str(tmp_path / "images"),
                 "train_masks": str(tmp_path / "masks")},
        "model": model,
        "train": {"epochs": 1, "batch_size": 2},
    }  # fmt: skip
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(config), "-o", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert message in result.output and str(tmp_path / "images") in result.output
    assert "(0.png)" in result.output
