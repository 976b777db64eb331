"""Elastic deformation (Ronneberger et al. 2015, §3.1): image and mask move together by a
smooth field of about the asked size, the mask stays binary, sigma 0 changes nothing."""

from __future__ import annotations

import torch

from attnkit.apps.segmentation.augment import elastic


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
