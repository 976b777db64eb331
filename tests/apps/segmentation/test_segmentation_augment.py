"""Elastic deformation (Ronneberger et al. 2015, §3.1): image and mask move together by a
smooth field of about the asked size, the mask stays binary, sigma 0 changes nothing. The
test-time mean over the 8 flips and quarter turns: it changes nothing for a model that turns
with its input, and for one that ignores its input it gives the symmetrised map."""

from __future__ import annotations

import numpy as np
import torch

from attnkit.apps.segmentation.augment import dihedral_mean, elastic


def test_sigma_zero_is_the_identity():
    images, masks = torch.rand(2, 1, 32, 40), (torch.rand(2, 1, 32, 40) > 0.5).float()
    moved, moved_masks = elastic(images, masks, 0.0, 3, seed=1)
    torch.testing.assert_close(moved, images, atol=1e-5, rtol=0)
    assert torch.equal(moved_masks, masks)


def test_image_and_mask_move_together_and_the_mask_stays_binary():
    masks = torch.zeros(3, 1, 64, 64)
    masks[:, :, 20:44, 10:30] = 1
    moved, moved_masks = elastic(masks.clone(), masks, 8.0, 3, seed=2)
    assert set(moved_masks.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal((moved > 0.5).float(), moved_masks)  # the same field for both
    assert not torch.equal(moved_masks, masks)


def test_the_displacement_has_about_the_asked_size_and_is_repeatable():
    w = 96
    ramp = torch.linspace(0, 1, w).expand(16, 1, w, w).contiguous()  # value = x / (w - 1)
    moved, _ = elastic(ramp, torch.zeros_like(ramp), 6.0, 3, seed=3)
    shift = (moved - ramp)[:, :, 8:-8, 8:-8] * (w - 1)  # x displacement in pixels, inside
    assert 2.0 < float(shift.std()) < 7.0
    again, _ = elastic(ramp, torch.zeros_like(ramp), 6.0, 3, seed=3)
    assert torch.equal(moved, again)


def test_dihedral_mean_of_a_model_that_turns_with_its_input_is_its_plain_prediction():
    images = torch.rand(2, 1, 8, 12)  # not square: the turned views are 12 x 8

    def pointwise(view):  # any per-pixel function commutes with flips and turns
        return torch.sigmoid(3 * view - 1)

    torch.testing.assert_close(dihedral_mean(pointwise, images), pointwise(images))


def test_dihedral_mean_of_a_fixed_map_is_its_average_over_the_square_s_symmetries():
    fixed = np.arange(36, dtype=np.float32).reshape(6, 6) / 36  # no symmetry of its own
    calls = []

    def blind(view):  # ignores the image: the same map on every view
        calls.append(tuple(view.shape))
        return torch.from_numpy(fixed).expand(view.size(0), 1, 6, 6)

    got = dihedral_mean(blind, torch.zeros(1, 1, 6, 6))[0, 0].numpy()
    symmetries = [np.rot90(m, k) for m in (fixed, fixed.T) for k in range(4)]  # the group D4
    np.testing.assert_allclose(got, np.mean(symmetries, axis=0), atol=1e-6)
    assert len(calls) == 8
