"""Attention maps over the image for Hugging Face ViT-style models (attnkit.hf.images) and the
core's patch grid and picture (attnkit.interpret.image_maps): maps against a NumPy rollout of
the eager weights, sdpa models switched to eager, DeiT's two prefix tokens, a non-square patch
count refused, the overlay read back from the PNG's pixels, and ``attnkit vision rollout
--hf``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from matplotlib.image import imread
from PIL import Image
from typer.testing import CliRunner

from attnkit.cli import app
from attnkit.hf.eager import eager_attention
from attnkit.hf.images import image_maps, plot_attention_maps, prefix_tokens
from attnkit.interpret.image_maps import patch_grid, plot_image_maps

transformers = pytest.importorskip("transformers")
TINY = dict(
    image_size=32,
    patch_size=8,
    num_hidden_layers=2,
    num_attention_heads=2,
    hidden_size=16,
    intermediate_size=32,
)
GREEN = (0.2, 0.6, 0.2)  # the test image: the overlay's red stands out against it
HOT = tuple(0.3 * g + 0.7 * r for g, r in zip(GREEN, (1.0, 0.0, 0.0), strict=True))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny random ViT classifier (seeded) with its image processor, saved to a folder."""
    torch.manual_seed(0)
    config = transformers.ViTConfig(**TINY, num_labels=3)
    folder = tmp_path_factory.mktemp("vit")
    transformers.AutoModelForImageClassification.from_config(config).save_pretrained(folder)
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def _load(folder, implementation):
    kind = transformers.ViTForImageClassification
    return kind.from_pretrained(folder, attn_implementation=implementation).eval()


def _pixels(batch: int = 3) -> torch.Tensor:
    return torch.rand(batch, 3, 32, 32, generator=torch.Generator().manual_seed(1)) * 2 - 1


def _numpy_maps(attentions, prefix: int, residual: float = 0.5):
    """Rollout (Abnar & Zuidema 2020, eq. (1)) and the last layer's head mean, in NumPy."""
    layers = [a.detach().numpy().astype(float) for a in attentions]  # L x (B, H, T, T)
    rollouts, lasts = [], []
    for b in range(layers[0].shape[0]):
        r = np.eye(layers[0].shape[-1])
        for w in layers:
            a = (1 - residual) * w[b].mean(0) + residual * np.eye(w.shape[-1])  # (T, T)
            r = (a / a.sum(-1, keepdims=True)) @ r  # (T, T)
        grid = int(np.sqrt(r.shape[0] - prefix))
        rollouts.append(r[0, prefix:].reshape(grid, grid))  # (grid, grid)
        lasts.append(layers[-1][b].mean(0)[0, prefix:].reshape(grid, grid))  # (grid, grid)
    return np.stack(rollouts), np.stack(lasts)


def test_maps_equal_a_numpy_rollout_of_the_eager_weights(model_dir):
    model, x = _load(model_dir, "eager"), _pixels()
    with torch.no_grad():
        attentions = model(pixel_values=x, output_attentions=True).attentions
    rollout, last = _numpy_maps(attentions, prefix=1)
    maps = image_maps(model, x)
    assert maps.prefix == 1 and maps.rollout.shape == (3, 4, 4)
    np.testing.assert_allclose(maps.rollout, rollout, atol=1e-6)
    np.testing.assert_allclose(maps.last, last, atol=1e-6)
    assert maps.labels is not None and len(maps.labels) == 3
    one = image_maps(model, x, head=1).last
    np.testing.assert_allclose(one[0], attentions[-1][0, 1, 0, 1:].reshape(4, 4), atol=1e-6)
    with pytest.raises(ValueError, match="head 2: the last layer has 2 heads"):
        image_maps(model, x, head=2)


def test_an_sdpa_model_gives_the_eager_maps_and_stays_sdpa(model_dir):
    sdpa, eager, x = _load(model_dir, "sdpa"), _load(model_dir, "eager"), _pixels()
    assert sdpa.config._attn_implementation == "sdpa"
    fast, slow = image_maps(sdpa, x), image_maps(eager, x)
    np.testing.assert_allclose(fast.rollout, slow.rollout, atol=1e-6)
    np.testing.assert_allclose(fast.last, slow.last, atol=1e-6)
    assert sdpa.config._attn_implementation == "sdpa"


def test_deit_drops_its_class_and_distillation_tokens():
    torch.manual_seed(0)
    config = transformers.DeiTConfig(**TINY)
    model = transformers.DeiTForImageClassificationWithTeacher(config).eval()  # sdpa
    x = _pixels(2)
    assert prefix_tokens(model) == 2 and prefix_tokens(model.deit) == 2
    with torch.no_grad(), eager_attention(model):
        attentions = model(pixel_values=x, output_attentions=True).attentions
    assert attentions[0].shape[-1] == 2 + 16
    rollout, last = _numpy_maps(attentions, prefix=2)
    maps = image_maps(model, x)
    np.testing.assert_allclose(maps.rollout, rollout, atol=1e-6)
    np.testing.assert_allclose(maps.last, last, atol=1e-6)
    with pytest.raises(ValueError, match="no class token"):
        prefix_tokens(torch.nn.Linear(2, 2))


def test_patch_grid_reshapes_a_row_and_refuses_a_non_square_count():
    row = np.arange(17.0)  # the class token, then 16 patches
    np.testing.assert_array_equal(patch_grid(row), np.arange(1.0, 17.0).reshape(4, 4))
    square = np.stack([row, row[::-1]])  # (2, 17): not (T, T)
    with pytest.raises(ValueError, match=r"expected \(T, T\)"):
        patch_grid(square)
    with pytest.raises(ValueError, match="13 patch tokens .14 tokens less 1 prefix.*not a square"):
        patch_grid(np.ones(14))
    assert patch_grid(np.eye(17), prefix=1).shape == (4, 4)  # the class token's row
    with pytest.raises(ValueError, match="15 patch tokens .17 tokens less 2 prefix"):
        patch_grid(np.eye(17), prefix=2)


def _panels(png) -> list[tuple[int, int, int, int]]:
    """The (top, bottom, left, right) pixel boxes of the coloured panels of one row (titles
    and the suptitle are black or grey: no saturation)."""
    rgb = imread(png)[..., :3]
    coloured = np.ptp(rgb, axis=-1) > 0.15  # (height, width)
    rows, cols = np.flatnonzero(coloured.any(1)), coloured.any(0)
    edges = np.flatnonzero(np.diff(cols.astype(int)))  # where a panel starts or ends
    starts, ends = edges[::2] + 1, edges[1::2] + 1
    return [(rows[0], rows[-1] + 1, a, b) for a, b in zip(starts, ends, strict=True)]


def _cell(png, box, grid: int, cell: tuple[int, int]) -> np.ndarray:
    """The colour at the centre of patch ``cell`` (row, column) of the panel in ``box``."""
    top, bottom, left, right = box
    y = int(top + (cell[0] + 0.5) * (bottom - top) / grid)
    x = int(left + (cell[1] + 0.5) * (right - left) / grid)
    return imread(png)[y, x, :3]


def _hot_and_cold(png, box, heat_map) -> tuple[np.ndarray, np.ndarray]:
    grid = heat_map.shape[0]
    hot = np.unravel_index(np.argmax(heat_map), heat_map.shape)
    cold = np.unravel_index(np.argmin(heat_map), heat_map.shape)
    return _cell(png, box, grid, hot), _cell(png, box, grid, cold)


def test_the_overlay_is_red_at_the_hottest_patch_and_clear_at_the_coldest(model_dir, tmp_path):
    model, x = _load(model_dir, "eager"), _pixels(1)
    green = torch.tensor(GREEN).reshape(1, 3, 1, 1).expand(1, 3, 32, 32)  # (1, 3, 32, 32)
    path = plot_attention_maps(model, x, tmp_path / "maps.png", images=green, names=["a.png"])
    maps = image_maps(model, x)
    boxes = _panels(path)
    assert len(boxes) == 2  # the rollout, then the last layer
    for box, heat_map in zip(boxes, (maps.rollout[0], maps.last[0]), strict=True):
        hot, cold = _hot_and_cold(path, box, heat_map)
        np.testing.assert_allclose(hot, HOT, atol=0.03)
        np.testing.assert_allclose(cold, GREEN, atol=0.03)
    one = np.zeros((3, 3))
    one[2, 1] = 1.0  # a map hot in one patch: the core draws it there
    core = plot_image_maps([green[0]], [one], tmp_path / "one.png", titles=["t"])
    (box,) = _panels(core)
    hot, cold = _hot_and_cold(core, box, one)
    np.testing.assert_allclose(hot, HOT, atol=0.03)
    np.testing.assert_allclose(cold, GREEN, atol=0.03)


def _image_folder(root, count: int = 3):
    rng = np.random.default_rng(0)
    root.mkdir()
    for i in range(count):
        pixels = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(root / f"{i}.png")
    return root


def test_cli_draws_a_model_folder_s_maps(model_dir, tmp_path):
    images, out = _image_folder(tmp_path / "images"), tmp_path / "hf.png"
    runner = CliRunner()
    command = ["vision", "rollout", "--hf", str(model_dir), "--images", str(images)]
    result = runner.invoke(app, [*command, "--output", str(out), "--count", "2"])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output
    assert len(_panels(out)) == 4  # two images, each twice
    result = runner.invoke(app, ["vision", "rollout", "--hf", str(model_dir)])
    assert result.exit_code == 2 and "needs --images" in result.output
    result = runner.invoke(app, ["vision", "rollout", str(tmp_path), *command[2:]])
    assert result.exit_code == 2 and "not both" in result.output
    result = runner.invoke(app, ["vision", "rollout", str(tmp_path), "--images", str(images)])
    assert result.exit_code == 2 and "go with --hf MODEL_DIR" in result.output
    result = runner.invoke(app, [*command[:4], "--images", str(tmp_path / "no-such")])
    assert result.exit_code == 2 and "no-such: not found" in result.output


def test_cli_errors_name_the_file(model_dir, tmp_path):
    images = _image_folder(tmp_path / "images", 1)
    (images / "list.txt").write_text("0.png\nbroken.png\n")
    (images / "broken.png").write_bytes(b"not a png")
    runner = CliRunner()
    command = ["vision", "rollout", "--hf", str(model_dir), "--images", str(images / "list.txt")]
    result = runner.invoke(app, [*command, "--output", str(tmp_path / "x.png")])
    assert result.exit_code == 2
    assert "list.txt, line 2: " in result.output and "cannot read this image" in result.output
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text((model_dir / "config.json").read_text())
    result = runner.invoke(app, ["vision", "rollout", "--hf", str(bare), "--images", str(images)])
    assert result.exit_code == 2
    assert f"{bare / 'preprocessor_config.json'}: missing" in result.output
    result = runner.invoke(app, [*command, "--split", "valid"])
    assert result.exit_code == 2 and "--split and --data-dir go with a run" in result.output
