"""Segmentation scores (attnkit.metrics.segmentation) against hand-computed values and sklearn."""

import numpy as np
import pytest
import torch

from attnkit.metrics import SegmentationScores, segmentation_scores
from attnkit.metrics.segmentation import dice, foreground_f1, iou, pixel_error, scores

# TP = 2 (0,0) (1,1); FP = 1 (0,1); FN = 2 (1,2) (2,1); TN = 4
PRED = np.array([[1, 1, 0], [0, 1, 0], [0, 0, 0]], dtype=np.uint8)
TRUTH = np.array([[1, 0, 0], [0, 1, 1], [0, 1, 0]], dtype=np.uint8)


def test_hand_computed_3x3():
    assert dice(PRED, TRUTH) == pytest.approx(4 / 7)  # 2 TP / (2 TP + FP + FN)
    assert iou(PRED, TRUTH) == pytest.approx(2 / 5)  # TP / (TP + FP + FN)
    assert pixel_error(PRED, TRUTH) == pytest.approx(3 / 9)
    assert foreground_f1(PRED, TRUTH) == pytest.approx(4 / 7)
    s = scores(PRED, TRUTH)
    assert s.precision == pytest.approx(2 / 3)  # TP / (TP + FP)
    assert s.recall == pytest.approx(1 / 2)  # TP / (TP + FN)
    assert s.f1 == pytest.approx(4 / 7) and s.dice == pytest.approx(4 / 7)
    assert s.images == 1 and s.foreground == pytest.approx(4 / 9)
    # swapping the roles swaps precision and recall and keeps the symmetric scores
    r = scores(TRUTH, PRED)
    assert (r.precision, r.recall) == (pytest.approx(1 / 2), pytest.approx(2 / 3))
    assert r.dice == pytest.approx(4 / 7) and r.iou == pytest.approx(2 / 5)


def test_inputs_bool_int_and_torch_agree():
    as_bool = scores(PRED.astype(bool), TRUTH.astype(bool))
    as_torch = scores(torch.tensor(PRED), torch.tensor(TRUTH, dtype=torch.float32))
    assert as_bool == scores(PRED, TRUTH) == as_torch
    assert dice(torch.tensor(PRED).bool(), torch.tensor(TRUTH).bool()) == pytest.approx(4 / 7)


def test_empty_masks():
    zero = np.zeros((3, 3), dtype=bool)
    both = scores(zero, zero)
    assert (both.dice, both.iou, both.precision, both.recall, both.f1) == (1, 1, 1, 1, 1)
    assert both.pixel_error == 0.0
    missed = scores(zero, TRUTH)  # predicted nothing of 4 foreground pixels
    assert (missed.dice, missed.iou, missed.precision, missed.recall, missed.f1) == (0,) * 5
    assert missed.pixel_error == pytest.approx(4 / 9)
    invented = scores(PRED, zero)  # 3 foreground pixels where there is none
    assert (invented.dice, invented.iou, invented.precision, invented.recall) == (0,) * 4
    assert invented.pixel_error == pytest.approx(3 / 9)


def test_pooled_and_per_image_mean_differ_as_computed_by_hand():
    pred = np.stack([PRED, np.zeros((3, 3), np.uint8)])[:, None]  # (2, 1, 3, 3)
    truth = np.stack([TRUTH, np.zeros((3, 3), np.uint8)])[:, None]
    s = scores(pred, truth)
    assert s.images == 2
    assert s.dice == pytest.approx(4 / 7)  # the empty image adds no TP, FP or FN
    assert s.mean_dice == pytest.approx((4 / 7 + 1.0) / 2)  # it scores 1 on its own
    assert s.mean_iou == pytest.approx((2 / 5 + 1.0) / 2)
    assert s.pixel_error == pytest.approx(3 / 18)
    assert s.mean_pixel_error == pytest.approx((3 / 9 + 0.0) / 2)
    assert s.mean_precision == pytest.approx((2 / 3 + 1) / 2)
    assert s.mean_recall == pytest.approx((1 / 2 + 1) / 2)
    assert s.foreground == pytest.approx(4 / 18)
    # two different images: pooled counts, not the mean of ratios
    other = np.array([[1, 1, 1], [1, 1, 1], [0, 0, 0]], np.uint8)  # TP 6 FP 0 FN 0 vs itself
    t = scores(np.stack([PRED, other]), np.stack([TRUTH, other]))
    assert t.dice == pytest.approx(2 * 8 / (2 * 8 + 1 + 2))
    assert t.mean_dice == pytest.approx((4 / 7 + 1.0) / 2)
    assert isinstance(t, SegmentationScores)
    assert set(t.as_dict()) >= {"dice", "iou", "pixel_error", "precision", "recall", "f1"}


def test_f1_equals_dice_on_random_masks():
    rng = np.random.default_rng(0)
    for p in (0.05, 0.3, 0.8):
        pred, truth = rng.random((4, 1, 16, 16)) < p, rng.random((4, 1, 16, 16)) < 0.3
        s = scores(pred, truth)
        assert s.f1 == pytest.approx(s.dice)
        assert s.f1 == pytest.approx(2 * s.precision * s.recall / (s.precision + s.recall))
        assert s.iou == pytest.approx(s.dice / (2 - s.dice))  # IoU = D / (2 - D)


def test_against_sklearn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    pred, truth = rng.random((3, 1, 20, 24)) < 0.4, rng.random((3, 1, 20, 24)) < 0.25
    p, t = pred.ravel(), truth.ravel()
    s = scores(pred, truth)
    assert foreground_f1(pred, truth) == pytest.approx(metrics.f1_score(t, p))
    assert s.precision == pytest.approx(metrics.precision_score(t, p))
    assert s.recall == pytest.approx(metrics.recall_score(t, p))
    assert iou(pred, truth) == pytest.approx(metrics.jaccard_score(t, p))
    assert pixel_error(pred, truth) == pytest.approx(1 - metrics.accuracy_score(t, p))
    per_image = [metrics.f1_score(truth[i].ravel(), pred[i].ravel()) for i in range(3)]
    assert s.mean_dice == pytest.approx(np.mean(per_image))


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match=r"differ in shape: \(3, 3\) and \(3, 4\)"):
        dice(PRED, np.zeros((3, 4)))
    soft = PRED.astype(np.float32)
    soft[2, 2] = 0.5  # a probability left unthresholded
    with pytest.raises(ValueError, match="pred must be a binary mask .* found values 0, 0.5, 1"):
        dice(soft, TRUTH)
    with pytest.raises(ValueError, match="truth must be a binary mask"):
        iou(PRED, TRUTH * 255)
    with pytest.raises(ValueError, match="no masks to score"):
        scores(np.zeros((0, 1, 4, 4)), np.zeros((0, 1, 4, 4)))


def test_exported_names():
    assert segmentation_scores is scores
