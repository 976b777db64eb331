"""Attention correctness on hand-built maps, and the per-word pictures."""

import numpy as np
import pytest
from PIL import Image

from attnkit.apps.captioning.scenes import Scene, SceneObject
from attnkit.apps.captioning.views import (
    attention_correctness,
    cell_overlap,
    mass_in_box,
    named_object,
    plot_caption,
    points_into,
    upsample,
)


def scene_of(objects):
    return Scene(np.zeros((32, 32, 3), np.float32), objects, np.zeros((len(objects), 32, 32)), "")


def one_hot(index, size=16):
    a = np.zeros(size)
    a[index] = 1.0
    return a


def test_cell_overlap_by_hand():
    # 4x4 grid on a 32 px canvas: cells are 8 px. Box x in [4, 16), y in [0, 8).
    overlap = cell_overlap((4, 0, 16, 8), grid=4, canvas=32).reshape(4, 4)
    expected = np.zeros((4, 4))
    expected[0, 0], expected[0, 1] = 0.5, 1.0
    assert np.allclose(overlap, expected)
    assert cell_overlap((0, 0, 32, 32), 4, 32).sum() == 16


def test_mass_and_pointing_by_hand():
    box = (8, 8, 24, 24)  # cells (1,1), (1,2), (2,1), (2,2) of a 4x4 grid, fully
    alpha = np.full(16, 0.5 / 12)
    alpha[[5, 6, 9, 10]] = 0.5 / 4
    assert mass_in_box(alpha, box, 4, 32) == pytest.approx(0.5)
    assert points_into(alpha, box, 4, 32)
    assert not points_into(one_hot(0), box, 4, 32)
    # the argmax cell's centre (12, 4) is outside a box that covers half of that cell
    assert not points_into(one_hot(1), (8, 0, 16, 4), 4, 32)
    assert mass_in_box(one_hot(1), (8, 0, 16, 4), 4, 32) == pytest.approx(0.5)


def test_named_object_uses_the_colour_then_the_shape():
    scene = scene_of(
        [
            SceneObject("circle", "red", (0, 0, 8, 8)),
            SceneObject("circle", "blue", (16, 16, 24, 24)),
            SceneObject("square", "green", (24, 0, 32, 8)),
        ]
    )
    assert named_object("a blue circle".split(), 2, scene) == 1
    assert named_object("a red circle".split(), 2, scene) == 0
    assert named_object("a green circle".split(), 2, scene) is None  # two circles, no green one
    assert named_object("a red square".split(), 2, scene) == 2  # the only square
    assert named_object("a red triangle".split(), 2, scene) is None


def test_attention_correctness_on_hand_built_maps():
    scene = scene_of(
        [
            SceneObject("circle", "red", (0, 0, 16, 16)),
            SceneObject("square", "blue", (16, 16, 32, 32)),
        ]
    )
    words = "a red circle left of a blue square".split()
    alpha = np.full((len(words), 16), 1 / 16)
    alpha[2] = one_hot(0)  # "circle": all inside the red circle's box
    alpha[7] = 0.25 * one_hot(15) + 0.75 * one_hot(0)  # "square": a quarter inside, points out
    wrong = "a green triangle".split()  # names nothing in the scene: a miss
    result = attention_correctness(
        [words, wrong], [alpha, np.full((3, 16), 1 / 16)], [scene, scene], grid=4
    )
    assert (result.nouns, result.matched) == (3, 2)
    assert result.mass == pytest.approx((1.0 + 0.25 + 0.0) / 3)
    assert result.pointing == pytest.approx(1 / 3)
    # phrases: "a red circle" averages 1/16, 1/16, one-hot(0): 1/3 * (1 + 2 * 4/16) inside
    assert result.phrase_mass == pytest.approx((0.5 + (2 / 3 * 0.25 + 1 / 3 * 0.25)) / 3)
    assert result.phrase_pointing == pytest.approx(1 / 3)
    assert attention_correctness([["a"]], [alpha[:1]], [scene], 4).nouns == 0


def test_upsample_keeps_the_peak_where_the_cell_is():
    heat = upsample(one_hot(5), 32)  # cell (1, 1) of a 4x4 grid: centre pixel (12, 12)
    assert heat.shape == (32, 32) and heat.max() == pytest.approx(1.0)
    y, x = np.unravel_index(np.argmax(heat), heat.shape)
    assert 8 <= y < 16 and 8 <= x < 16
    assert not upsample(np.zeros(16), 32).any()


def test_plot_caption_writes_one_panel_per_word(tmp_path):
    image = np.random.default_rng(0).random((32, 32, 3))
    words = "a red circle".split()
    alphas = np.stack([one_hot(i) for i in range(3)])
    path = plot_caption(image, words, alphas, tmp_path / "c.png", boxes=[(0, 0, 8, 8)])
    with Image.open(path) as img:
        width, height = img.size
    assert width > 2.5 * height  # image + 3 word panels in one row
    boxes = np.array([[0, 0, 8, 8]])  # Scene.boxes is an (N, 4) array: drawn the same
    again = plot_caption(image, words, alphas, tmp_path / "d.png", boxes=boxes)
    assert np.array_equal(np.asarray(Image.open(again)), np.asarray(Image.open(path)))
    with pytest.raises(ValueError, match="unknown picture format"):
        plot_caption(image, words, np.zeros((3, 16)), tmp_path / "c.gif")
