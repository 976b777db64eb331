"""U-Net and Attention U-Net on one backbone, trained by the engine, from the CLI and Python."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml
from PIL import Image
from typer.testing import CliRunner

from attnkit.apps.segmentation.model import UNet, UNetConfig
from attnkit.apps.segmentation.training import dice_loss, image_losses
from attnkit.attention import AttentionGate
from attnkit.cli import app
from attnkit.metrics.segmentation import dice


def test_the_gates_are_the_only_difference():
    torch.manual_seed(0)
    plain, gated = UNet(UNetConfig(gates=False)), UNet(UNetConfig(gates=True))
    extra = {k for k in gated.state_dict() if k not in plain.state_dict()}
    assert extra and all(".gate." in k for k in extra)
    assert set(plain.state_dict()) <= set(gated.state_dict())
    for k, v in plain.state_dict().items():
        assert gated.state_dict()[k].shape == v.shape, k
    gates = [m for m in gated.modules() if isinstance(m, AttentionGate)]
    n_gate = sum(p.numel() for g in gates for p in g.parameters())
    n = [sum(p.numel() for p in m.parameters()) for m in (plain, gated)]
    assert n[1] - n[0] == n_gate and len(gates) == 3  # one gate per skip connection


def test_shapes_gates_and_deep_supervision():
    model = UNet(UNetConfig(channels=(4, 8, 16), deep_supervision=True))
    with torch.no_grad():
        out = model(torch.rand(2, 1, 32, 48))
    assert out.logits.shape == (2, 1, 32, 48)
    assert [tuple(g.shape) for g in out.gates] == [(2, 1, 32, 48), (2, 1, 16, 24)]
    assert all(0 <= float(g.min()) <= float(g.max()) <= 1 for g in out.gates.copy())
    assert [tuple(a.shape) for a in out.aux] == [(2, 1, 32, 48)]  # the middle level
    assert UNet(UNetConfig(channels=(4, 8, 16), gates=False))(torch.rand(1, 1, 8, 8)).gates == []


def test_image_sides_must_divide_by_the_levels():
    with pytest.raises(ValueError, match="multiples of 4"):
        UNet(UNetConfig(channels=(4, 8, 16)))(torch.rand(1, 1, 30, 32))
    with pytest.raises(ValueError, match=r"must be \(B, 1, H, W\)"):
        UNet(UNetConfig(channels=(4, 8)))(torch.rand(1, 3, 8, 8))


def test_soft_dice_loss_is_one_minus_dice_on_confident_logits():
    g = torch.Generator().manual_seed(0)
    masks = (torch.rand(3, 1, 8, 8, generator=g) > 0.6).float()
    pred = (torch.rand(3, 1, 8, 8, generator=g) > 0.5).float()
    logits = (pred * 2 - 1) * 50  # sigmoid = 0 or 1
    per_image = [1 - dice(pred[i] > 0, masks[i] > 0) for i in range(3)]
    smooth = dice_loss(logits, masks)  # +1 smoothing in numerator and denominator
    assert torch.allclose(smooth, torch.tensor(per_image, dtype=torch.float32), atol=0.05)
    assert image_losses(logits, masks, 0.0).shape == (3,)


def _config(tmp_path, **train) -> str:
    path = tmp_path / "seg.yaml"
    cfg = {
        "name": "seg",
        "task": "segmentation",
        "data": {"source": "shapes", "sizes": [32, 8, 8], "size": 32},
        "model": {"channels": [4, 8, 16]},
        "train": {"epochs": 2, "batch_size": 8, "threads": 1, **train},
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return str(path)


def test_train_evaluate_predict_from_the_command_line(tmp_path):
    run, runner = tmp_path / "run", CliRunner()
    result = runner.invoke(app, ["train", _config(tmp_path, test_flips=True), "-o", str(run)])
    assert result.exit_code == 0, result.output
    assert "valid_dice" in result.stdout  # the nested test scores: metrics.json and --json
    final = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert 0 <= final["test"]["dice"] <= 1 and 0 <= final["test_flips"]["dice"] <= 1
    result = runner.invoke(app, ["evaluate", str(run), "--split", "test"])
    assert result.exit_code == 0, result.output
    first, title, header, *rows = result.stdout.strip().splitlines()
    assert first.startswith(f"{run} test: dice ") and first.endswith("(8 images)")
    assert title == "test: mean of 8 flips and turns"
    assert header.split() == ["score", "plain", "flips"]
    assert [r.split()[0] for r in rows][:3] == ["dice", "iou", "pixel_error"]
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics["test_flips"]) == set(metrics["test"])
    result = runner.invoke(app, ["evaluate", str(run), "--json"])
    scored = json.loads(result.stdout)
    assert scored["metrics"]["dice"] == pytest.approx(metrics["test"]["dice"])
    assert scored["count"] == 8 and scored["unit"] == "images"
    flips = {row[0]: row[2] for row in scored["tables"][0]["rows"]}
    assert flips["dice"] == pytest.approx(metrics["test_flips"]["dice"])
    image = tmp_path / "in.png"
    Image.fromarray((np.random.default_rng(0).random((32, 32)) * 255).astype(np.uint8)).save(image)
    rows, picture = tmp_path / "seg.tsv", tmp_path / "gates.png"
    result = runner.invoke(
        app, ["predict", str(run), str(image), "--output", str(rows), "--picture", str(picture)]
    )
    assert result.exit_code == 0, result.output
    mask = tmp_path / "seg-masks" / "in.png"
    ((name, share, written),) = [line.split("\t") for line in rows.read_text().splitlines()]
    assert (name, written) == (str(image), str(mask))
    values = np.asarray(Image.open(mask))
    assert values.shape == (32, 32) and set(np.unique(values)) <= {0, 255}
    assert float(share) == pytest.approx((values > 0).mean(), abs=1e-4)
    assert Image.open(picture).size[0] > 3 * Image.open(picture).size[1]  # 4 panels in a row


def test_picture_is_refused_for_another_task(tmp_path):
    from tests.test_kill_resume_every_task import CONFIGS

    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**CONFIGS["image-classification"], "name": "v"}))
    runner = CliRunner()
    assert runner.invoke(app, ["train", str(config), "-o", str(tmp_path / "v")]).exit_code == 0
    result = runner.invoke(app, ["predict", str(tmp_path / "v"), "x.png", "--picture", "p.png"])
    assert result.exit_code == 2
    assert "--picture: not taken by image-classification runs" in result.stderr


def test_a_run_of_another_kind_is_refused_in_one_line(tmp_path, capsys):
    import sys
    from pathlib import Path

    from attnkit.application import WrongRunKind
    from attnkit.apps.segmentation.run import SegmentationRun

    other = tmp_path / "mycls"
    other.mkdir()
    (other / "config.yaml").write_text("task: text-classification\nname: mycls\n")
    with pytest.raises(WrongRunKind) as caught:
        SegmentationRun.load(other)
    assert caught.value.for_command("segmentation predict") == (
        f"{other} is a text-classification run; attnkit segmentation predict needs a "
        "segmentation run"
    )
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from benchmarks.segmentation_thresholds import main

    with pytest.raises(WrongRunKind, match="is a text-classification run"):
        main([str(other)])


def test_deep_supervision_adds_its_losses(tmp_path):
    from attnkit.apps.segmentation.config import load_config
    from attnkit.apps.segmentation.training import Batch, SegmentationTask

    cfg = load_config(_config(tmp_path), ["model.deep_supervision=true"])
    task = SegmentationTask(cfg)
    task.prepare(None, resume=False)
    torch.manual_seed(0)
    model = task.build_model()
    batch = Batch(torch.arange(4))
    with_aux = float(task.loss(model, batch).total.detach())
    cfg.train.aux_weight = 0.0
    assert float(task.loss(model, batch).total.detach()) < with_aux


def test_predict_set_with_flips_averages_the_eight_views_of_the_network():
    from attnkit.apps.segmentation.augment import DIHEDRAL
    from attnkit.apps.segmentation.sets import ImageMasks
    from attnkit.apps.segmentation.training import predict_set

    torch.manual_seed(0)
    model = UNet(UNetConfig(channels=[4, 8]))  # random 3x3 kernels: not symmetric
    images = torch.rand(3, 1, 16, 16)
    data = ImageMasks(images, (images > 0.5).float(), ["a", "b", "c"])
    plain, _ = predict_set(model, data)
    flipped, _ = predict_set(model, data, flips=True)
    views = []
    for turns, flip in DIHEDRAL:  # each view by hand: rows and columns reversed as numpy does
        x = images.numpy()
        x = np.rot90(x, turns, axes=(2, 3))
        x = x[..., ::-1] if flip else x
        p, _ = predict_set(model, ImageMasks(torch.from_numpy(x.copy()), data.masks, data.names))
        p = p.numpy()[..., ::-1] if flip else p.numpy()
        views.append(np.rot90(p, -turns, axes=(2, 3)))
    np.testing.assert_allclose(flipped.numpy(), np.mean(views, axis=0), atol=1e-5)
    assert not torch.allclose(plain, flipped, atol=1e-3)
