"""``train.channels_last``: the NHWC layout changes the speed of the convolutions, not the
numbers they compute, and the run it trains saves weights any model reads."""

from __future__ import annotations

import torch
import yaml
from tests.apps.segmentation.test_segmentation_crop import Recorder  # keeps the images it is given

import attnkit
from attnkit.apps.segmentation.config import load_config
from attnkit.apps.segmentation.training import SegmentationTask
from attnkit.engine.trainer import fit


def _config(tmp_path, **train) -> str:
    path = tmp_path / "seg.yaml"
    cfg = {
        "name": "seg",
        "task": "segmentation",
        "data": {"source": "shapes", "sizes": [8, 4, 4], "size": 32},
        "model": {"channels": [4, 8, 16]},
        "train": {"epochs": 1, "batch_size": 4, "threads": 1, "bf16": False, **train},
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return str(path)


def _task(tmp_path, **train) -> SegmentationTask:
    task = SegmentationTask(load_config(_config(tmp_path, **train)))
    task.prepare(None, resume=False)
    return task


def test_the_weights_and_the_images_are_nhwc(tmp_path):
    task = _task(tmp_path, channels_last=True)
    model = Recorder(task.build_model())
    weight = model.net.head[3].weight  # the second conv: (4, 4, 3, 3)
    assert weight.is_contiguous(memory_format=torch.channels_last)
    assert not weight.is_contiguous()
    task.loss(model, task.epoch_batches(1)[0])
    # grey images (C = 1) are contiguous in both layouts: the strides tell NHWC, (H*W, 1, W, 1)
    h, w = model.seen[0].shape[-2:]
    assert model.seen[0].stride() == (h * w, 1, w, 1)


def test_the_default_layout_is_untouched(tmp_path):
    task = _task(tmp_path)
    model = Recorder(task.build_model())
    task.loss(model, task.epoch_batches(1)[0])
    assert model.net.head[3].weight.is_contiguous()
    h, w = model.seen[0].shape[-2:]
    assert model.seen[0].stride(1) == h * w  # NCHW's channel stride (the tile may be turned)


def test_loss_and_gradients_equal_the_default_layouts(tmp_path):
    nchw, nhwc = _task(tmp_path), _task(tmp_path, channels_last=True)
    torch.manual_seed(0)
    a = nchw.build_model()
    torch.manual_seed(0)
    b = nhwc.build_model()
    batch = nchw.epoch_batches(1)[0]  # the same images and masks for both
    loss_a, loss_b = nchw.loss(a, batch).total, nhwc.loss(b, batch).total
    torch.testing.assert_close(loss_b, loss_a, rtol=1e-5, atol=1e-6)
    loss_a.backward()
    loss_b.backward()
    # gradients reach 0.27; a conv bias before BatchNorm has a true gradient of 0, and both
    # layouts give it rounding noise of about 1e-6 (so the absolute tolerance)
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        torch.testing.assert_close(pb.grad, pa.grad, rtol=1e-4, atol=1e-5, msg=name)


def test_a_channels_last_run_saves_weights_a_default_model_reads(tmp_path):
    result = fit(
        SegmentationTask(load_config(_config(tmp_path, channels_last=True))), tmp_path / "run"
    )
    assert 0 <= result.final["test"]["dice"] <= 1
    run = attnkit.load_run(tmp_path / "run")  # a default-layout UNet reading model.safetensors
    assert run.model.head[3].weight.is_contiguous()
    images = torch.rand(2, 1, 32, 32)
    nhwc = SegmentationTask(run.config).build_model()
    nhwc.load_state_dict(run.model.state_dict())
    with torch.no_grad():
        expected = torch.sigmoid(nhwc.eval()(images).logits)
    torch.testing.assert_close(run.predict(images).logits, expected, rtol=1e-5, atol=1e-6)
