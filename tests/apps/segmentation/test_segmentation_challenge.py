"""The segmentation app's test scores: the pixel scores, and for ISBI the 2012 challenge's."""

from dataclasses import fields

import numpy as np
import pytest
import torch

from attnkit.apps.segmentation.challenge import split_scores
from attnkit.metrics.boundaries import tolerant_f1, v_info, v_rand
from attnkit.metrics.segmentation import Scores


def membranes() -> tuple[torch.Tensor, torch.Tensor]:
    """Probabilities and masks ``(2, 1, 24, 24)``: a grid of membranes, the prediction's moved
    one pixel and missing a piece of one line."""
    masks = torch.zeros(2, 1, 24, 24)
    masks[:, :, 8, :] = masks[:, :, :, 15] = 1.0
    probs = torch.full_like(masks, 0.2)
    probs[:, :, 9, :] = probs[:, :, :, 15] = 0.9
    probs[1, :, 2:6, 15] = 0.4  # below the threshold: a gap
    return probs, masks


def test_isbi_adds_the_challenge_scores():
    probs, masks = membranes()
    found = split_scores(probs, masks, "isbi")
    pred, truth = (probs > 0.5).numpy(), (masks > 0.5).numpy()
    assert found["f1_tol1"] == tolerant_f1(pred, truth, 1).f1 < 1.0
    assert found["f1_tol2"] == tolerant_f1(pred, truth, 2).f1 == 1.0
    assert found["v_rand"] == v_rand(pred, truth).score < 1.0
    assert found["v_info"] == pytest.approx(v_info(pred, truth).score)
    assert found["f1"] < found["f1_tol1"]  # the pixel scores stay


@pytest.mark.parametrize("source", ["shapes", "folder"])
def test_other_sources_keep_the_pixel_scores(source):
    probs, masks = membranes()
    found = split_scores(probs, masks, source)
    assert set(found) == {f.name for f in fields(Scores)}
    assert found["f1"] == split_scores(probs, masks, "isbi")["f1"]
    assert all(isinstance(v, float | int) and np.isfinite(v) for v in found.values())
