"""The pyramidal listener (Chan et al. 2016, eq. (5)): time shrinks 2^p times, padding never
reaches a real frame, and the frames past the last full group of 2^p are dropped."""

from __future__ import annotations

import pytest
import torch

from attnkit.apps.speech.listener import PyramidalListener, kept_frames, listener_mask


def _listener(pyramid: int = 2) -> PyramidalListener:
    torch.manual_seed(0)
    return PyramidalListener(n_features=5, d_hidden=4, pyramid=pyramid).double().eval()


def test_pyramid_halves_time_per_layer_and_masks_the_rest():
    listener = _listener(pyramid=2)
    x = torch.randn(3, 37, 5, dtype=torch.float64)
    h, mask = listener(x, torch.tensor([37, 20, 4]))
    assert h.shape == (3, 9, 8)  # 37 // 4 annotations, 2 x 4 wide
    assert mask.sum(1).tolist() == [9, 5, 1]
    assert torch.equal(mask, listener_mask(torch.tensor([37, 20, 4]), 37, 2))
    assert torch.all(h[~mask] == 0) and torch.all(h[mask].abs().sum(-1) > 0)
    assert _listener(pyramid=0)(x, torch.tensor([37, 20, 4]))[0].shape == (3, 37, 8)


def test_a_padded_utterance_gives_what_it_gives_alone():
    """Padding filled with large values changes nothing on the real annotations (packed
    sequences: the backward LSTM starts at each utterance's own end)."""
    listener = _listener()
    torch.manual_seed(1)
    short, long = torch.randn(1, 20, 5).double(), torch.randn(1, 31, 5).double()
    alone, _ = listener(short, torch.tensor([20]))
    padded = torch.cat([short, 100 * torch.randn(1, 11, 5).double()], 1)  # (1, 31, 5)
    batch, mask = listener(torch.cat([padded, long]), torch.tensor([20, 31]))
    torch.testing.assert_close(batch[0, :5], alone[0], rtol=0, atol=1e-12)
    assert torch.all(batch[0, 5:] == 0) and mask[0].sum() == 5
    torch.testing.assert_close(batch[1], listener(long, torch.tensor([31]))[0][0])


def test_frames_after_the_last_full_group_are_dropped():
    """23 frames at p = 2: the listener reads the first 20, whatever the last 3 hold."""
    listener = _listener()
    x = torch.randn(1, 23, 5, dtype=torch.float64)
    assert kept_frames(torch.tensor([23, 8, 3]), 2).tolist() == [20, 8, 0]
    h, _ = listener(x, torch.tensor([23]))
    torch.testing.assert_close(h, listener(x[:, :20], torch.tensor([20]))[0], rtol=0, atol=0)
    y = x.clone()
    y[:, 20:] = 7.0
    assert torch.equal(listener(y, torch.tensor([23]))[0], h)


def test_an_utterance_too_short_for_one_annotation_is_an_error():
    with pytest.raises(ValueError, match="shorter than the 4 frames"):
        _listener()(torch.randn(2, 8, 5).double(), torch.tensor([8, 3]))


def test_a_forward_only_listener_never_reads_what_follows():
    """``bidirectional=False``: changing the frames after annotation u leaves annotations
    0..u unchanged, and the annotations are D wide; the bidirectional listener does change."""
    x = torch.randn(1, 32, 5, dtype=torch.float64)
    later = x.clone()
    later[:, 16:] = torch.randn(1, 16, 5, dtype=torch.float64)  # frames of annotations 4-7
    lengths = torch.tensor([32])
    torch.manual_seed(0)
    forward = PyramidalListener(5, 4, pyramid=2, bidirectional=False).double().eval()
    h, _ = forward(x, lengths)
    assert h.shape == (1, 8, 4) and forward.d_out == 4
    torch.testing.assert_close(forward(later, lengths)[0][:, :4], h[:, :4], rtol=0, atol=0)
    assert not torch.allclose(forward(later, lengths)[0][:, 4:], h[:, 4:])
    both = _listener()
    assert not torch.allclose(both(later, lengths)[0][:, :4], both(x, lengths)[0][:, :4])
