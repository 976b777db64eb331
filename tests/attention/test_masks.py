"""Mask helpers: one convention, True = may attend."""

import pytest
import torch

from attnkit.attention import causal_mask, combine, key_padding_mask, padding_mask, to_blocked


def test_padding_and_key_padding():
    keep = padding_mask(torch.tensor([3, 1, 0]), 4)
    assert keep.tolist() == [[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]]
    assert key_padding_mask(keep).shape == (3, 1, 1, 4)
    with pytest.raises(ValueError, match="exceeds max_len"):
        padding_mask(torch.tensor([5]), 4)
    with pytest.raises(ValueError, match="bool"):
        key_padding_mask(keep.long())


def test_causal_with_offset_for_cached_decoding():
    assert causal_mask(3).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    # the last two queries of a length-4 sequence
    assert causal_mask(2, 4).tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    with pytest.raises(ValueError, match="tk >= tq"):
        causal_mask(4, 2)


def test_combine_and_torch_boundary():
    keep = key_padding_mask(padding_mask(torch.tensor([2, 3]), 3))  # (B, 1, 1, Tk)
    both = combine(keep, causal_mask(3), None)
    assert both.shape == (2, 1, 3, 3)
    assert both[0, 0].tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 0]]
    assert combine(None, None) is None
    assert torch.equal(to_blocked(both), ~both) and to_blocked(None) is None
