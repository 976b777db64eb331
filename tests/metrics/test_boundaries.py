"""Membrane scores (attnkit.metrics.boundaries) against hand-computed values and direct NumPy
implementations of the ISBI 2012 challenge's definitions (Arganda-Carreras et al. 2015)."""

import numpy as np
import pytest
import torch

from attnkit.metrics.boundaries import (
    _singletons,
    label_ceiling,
    predicted_regions,
    tolerant_f1,
    true_regions,
    v_info,
    v_rand,
)
from attnkit.metrics.segmentation import foreground_f1

THINNINGS = ("watershed", "skeleton")


def cross() -> np.ndarray:
    """9 x 9 membranes along row 4 and column 4: four true regions of 16 pixels."""
    m = np.zeros((9, 9), dtype=bool)
    m[4, :] = m[:, 4] = True
    return m


def split_top_left() -> np.ndarray:
    """The cross and a false membrane along row 2 of the top-left region (8 + 4 pixels and 4
    boundary pixels, each a region of its own)."""
    m = cross()
    m[2, :4] = True
    return m


def merge_left() -> np.ndarray:
    """The cross without its left arm: the two left regions merged (32 pixels)."""
    m = cross()
    m[4, :4] = False
    return m


def reference(truth: np.ndarray, pred: np.ndarray, thinning: str):
    """V-Rand and V-Info ``(score, split, merge)`` straight from the definitions: counts of the
    pixels of each true region (membranes left out) in each thinned predicted region."""
    t = true_regions(truth)
    p = _singletons(predicted_regions(pred, thinning))
    fg = t > 0
    n_ij = np.unique(np.stack([t[fg], p[fg]]), axis=1, return_counts=True)[1]
    t_j = np.unique(t[fg], return_counts=True)[1]
    s_i = np.unique(p[fg], return_counts=True)[1]

    def pairs(c):
        return float((c * (c - 1.0)).sum())

    def entropy(c):
        q = c / fg.sum()
        return float(-(q * np.log2(q)).sum())

    split, merge = pairs(n_ij) / pairs(t_j), pairs(n_ij) / pairs(s_i)
    rand = (2 * split * merge / (split + merge), split, merge)
    info = entropy(t_j) + entropy(s_i) - entropy(n_ij)  # I = H(T) + H(S) - H(T, S)
    split, merge = info / entropy(s_i), info / entropy(t_j)
    return rand, (2 * split * merge / (split + merge), split, merge)


def terms(s) -> tuple[float, float, float]:
    return s.score, s.split, s.merge


@pytest.mark.parametrize("thinning", THINNINGS)
def test_perfect_segmentation_scores_one(thinning):
    for score in (v_rand, v_info):
        assert terms(score(cross(), cross(), thinning=thinning)) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("thinning", THINNINGS)
def test_thick_predicted_membranes_are_thinned(thinning):
    """Membranes 3 px wide around the true 1-px ones enclose the same regions: 1.0 only after
    thinning (unthinned, the extra membrane pixels would be split off as regions)."""
    truth = np.zeros((15, 15), dtype=bool)
    truth[7, :] = truth[:, 7] = True
    pred = np.zeros_like(truth)
    pred[6:9, :] = pred[:, 6:9] = True
    assert v_rand(pred, truth, thinning=thinning).score == 1.0
    assert v_info(pred, truth, thinning=thinning).score == pytest.approx(1.0)


def test_skeleton_reaches_the_image_edge():
    """A 5-px membrane across the image: its skeleton must still cut the two regions apart."""
    truth = np.zeros((20, 20), dtype=bool)
    truth[10, :] = True
    pred = np.zeros_like(truth)
    pred[8:13, :] = True
    assert v_rand(pred, truth, thinning="skeleton").merge == 1.0


def test_split_lowers_only_the_split_terms():
    rand, info = v_rand(split_top_left(), cross()), v_info(split_top_left(), cross())
    # pairs n (n - 1): regions 8, 4, 1 x 4 (boundary pixels), 16 x 3 against 16 x 4
    split = (8 * 7 + 4 * 3 + 3 * 16 * 15) / (4 * 16 * 15)
    assert terms(rand) == pytest.approx((2 * split / (split + 1), split, 1.0))
    h_s = -sum(c / 64 * np.log2(c / 64) for c in (8, 4, 1, 1, 1, 1, 16, 16, 16))
    assert terms(info) == pytest.approx((2 * 2.0 / (2.0 + h_s), 2.0 / h_s, 1.0))  # I = H(T) = 2


def test_merge_lowers_only_the_merge_terms():
    rand, info = v_rand(merge_left(), cross()), v_info(merge_left(), cross())
    merge = (4 * 16 * 15) / (32 * 31 + 2 * 16 * 15)
    assert terms(rand) == pytest.approx((2 * merge / (merge + 1), 1.0, merge))
    # H(T) = 2 bits, H(S) = I = 1.5 bits (S coarsens T): merge I / H(T) = 0.75
    assert terms(info) == pytest.approx((2 * 1.5 / 3.5, 1.0, 0.75))


@pytest.mark.parametrize("thinning", THINNINGS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_membranes_match_the_numpy_definitions(thinning, seed):
    """Membranes across a 40 x 40 image; the prediction moves and widens them, leaves gaps
    (merges) and adds half-lines (splits)."""
    rng = np.random.default_rng(seed)
    truth, pred = np.zeros((2, 40, 40), dtype=bool)
    for axis in (0, 1, 0, 1, 0, 1):
        k, w = rng.integers(2, 36), rng.integers(1, 4)
        gap = rng.integers(0, 35)
        np.moveaxis(truth, axis, 0)[k : k + w] = True
        moved = np.moveaxis(pred, axis, 0)
        moved[k + rng.integers(-1, 2) : k + w + rng.integers(0, 3)] = True
        if rng.random() < 0.5:
            moved[k - 1 : k + 5, gap : gap + 4] = False
    pred[rng.integers(0, 40), : rng.integers(5, 30)] = True
    rand, info = reference(truth, pred, thinning)
    assert terms(v_rand(pred, truth, thinning=thinning)) == pytest.approx(rand, abs=1e-12)
    assert terms(v_info(pred, truth, thinning=thinning)) == pytest.approx(info, abs=1e-12)


def test_scores_average_the_images_and_take_torch_stacks():
    pred = torch.tensor(np.stack([cross(), merge_left()]))[:, None]  # (N, 1, H, W)
    truth = torch.tensor(np.stack([cross(), cross()]), dtype=torch.float32)[:, None]
    merged = v_rand(merge_left(), cross())
    both = v_rand(pred, truth)
    assert both.images == 2
    assert terms(both) == pytest.approx(((1 + merged.score) / 2, 1.0, (1 + merged.merge) / 2))


@pytest.mark.parametrize("thinning", THINNINGS)
def test_regions_are_4_connected(thinning):
    """A 1-px diagonal (8-connected) membrane separates two 4-connected regions, as in the
    challenge's script; 8-connected, they would be one."""
    diagonal = np.eye(8, dtype=bool)
    assert true_regions(diagonal).max() == 2
    assert np.unique(predicted_regions(diagonal, thinning)[~diagonal]).size == 2
    assert v_rand(np.zeros_like(diagonal), diagonal).merge < 1.0  # nothing predicted: merged


def test_an_unknown_thinning_is_refused():
    with pytest.raises(ValueError, match="thinning must be"):
        v_rand(cross(), cross(), thinning="erode")


def test_tolerance_zero_is_the_pixel_f1():
    rng = np.random.default_rng(3)
    pred, truth = rng.random((2, 4, 16, 16)) < 0.3
    found = tolerant_f1(pred, truth, 0)
    assert found.f1 == foreground_f1(pred, truth)
    assert found.mean_f1 == pytest.approx(
        np.mean([foreground_f1(p, t) for p, t in zip(pred, truth, strict=True)])
    )
    assert found.images == 4


def test_tolerance_is_euclidean():
    """A 1-px line moved one pixel sideways is found at tolerance 1; moved one pixel diagonally
    (sqrt 2 away) only from tolerance sqrt 2 on."""
    truth = np.zeros((10, 10), dtype=bool)
    truth[2:8, 4] = True
    side = np.roll(truth, 1, axis=1)
    diagonal = np.roll(side, 1, axis=0)
    assert tolerant_f1(side, truth, 0).f1 == 0.0
    assert tolerant_f1(side, truth, 1).f1 == 1.0
    assert tolerant_f1(diagonal, truth, 1).f1 == pytest.approx(5 / 6)
    assert tolerant_f1(diagonal, truth, 1.5).f1 == 1.0


def test_tolerant_f1_pools_counts_and_averages_images():
    truth = np.zeros((2, 10, 10), dtype=bool)
    truth[0, :, 4] = True  # 10 pixels, found
    truth[1, 5, :2] = True  # 2 pixels, missed
    pred = truth.copy()
    pred[1] = False
    pred[1, 0, 9] = True  # one predicted pixel far from any true one
    found = tolerant_f1(pred, truth, 1)
    assert (found.precision, found.recall) == (pytest.approx(10 / 11), pytest.approx(10 / 12))
    assert (found.mean_precision, found.mean_recall, found.mean_f1) == (0.5, 0.5, 0.5)


def test_tolerant_f1_empty_masks_and_negative_tolerance():
    empty = np.zeros((6, 6), dtype=bool)
    assert tolerant_f1(empty, empty, 1).f1 == 1.0  # nothing to find, nothing found
    some = empty.copy()
    some[3, 3] = True
    assert tolerant_f1(empty, some, 2).f1 == 0.0 and tolerant_f1(some, empty, 2).f1 == 0.0
    with pytest.raises(ValueError, match="tolerance"):
        tolerant_f1(some, some, -1)


def test_label_ceiling_of_a_band_and_a_dot():
    """A 3-px band across a 5 x 5 image dilates to 5 px (F1 2*15/(15+25)) and erodes to its
    1-px middle (F1 2*5/(5+15): the image edge erodes nothing); a dot dilates to its 4
    neighbours (F1 2*1/(1+5)) and erodes away (F1 0). Pooled: the counts of both images."""
    truth = np.zeros((2, 5, 5), dtype=bool)
    truth[0, :, 1:4] = True
    truth[1, 2, 2] = True
    found = label_ceiling(truth)
    assert (found.mean_dilated, found.mean_eroded) == (
        pytest.approx((0.75 + 1 / 3) / 2),
        pytest.approx(0.25),
    )
    assert (found.dilated, found.eroded) == (pytest.approx(32 / 46), pytest.approx(10 / 21))
