"""The listener of "Listen, Attend and Spell" (Chan, Jaitly, Le & Vinyals 2016, §3.1): a
pyramidal bidirectional LSTM that shortens the utterance ``2^p`` times before it is attended.

A first BiLSTM layer reads the frames ``x (B, T, F)``; each of the ``p`` pyramid layers then
joins consecutive pairs of its input and runs another BiLSTM over the pairs (eq. (5)):

    h^j_i = pBLSTM(h^j_{i-1}, [h^{j-1}_{2i}, h^{j-1}_{2i+1}])

so the annotations ``h (B, T // 2^p, 2 D)`` are ``2^p`` times shorter (the paper: ``p = 3``,
8 times) and attention has fewer frames to search.

Choices made here (the paper leaves them open):

- **Odd frames are dropped, once, up front.** Each utterance keeps its first
  ``floor(T / 2^p) * 2^p`` frames (at most ``2^p - 1`` frames of the end, typically silence,
  are dropped), so every layer pairs only real frames and ``T' = floor(T / 2^p)``. Dropping
  before the first BiLSTM, rather than at each pyramid layer, makes the output a function of
  the kept frames only: an utterance's listener mask ``(B, T')`` determines which frames were
  read (:func:`listener_mask`), which is how :class:`~attnkit.apps.speech.model.SpeechModel`
  takes its source mask.
- **Padding never leaks**: every BiLSTM runs on packed sequences, so the backward direction
  starts at each utterance's own last frame; outputs at padded positions are 0.
- **Forward only** (``bidirectional=False``): every layer reads left to right, so an annotation
  knows what was said up to it and nothing of what follows: not where the utterance ends, nor
  how many words are still to come (a streaming listener; the same pyramid).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def kept_frames(lengths: Tensor, pyramid: int) -> Tensor:
    """``(B,)`` the frames the listener reads of utterances of ``lengths (B,)`` frames:
    ``floor(T / 2^p) * 2^p`` (module docstring)."""
    reduction = 2**pyramid
    return torch.div(lengths, reduction, rounding_mode="floor") * reduction


def listener_mask(lengths: Tensor, frames: int, pyramid: int) -> Tensor:
    """``(B, frames // 2^p)`` bool, True at the real annotations of utterances of ``lengths
    (B,)`` frames padded to ``frames``: ``t < floor(T / 2^p)``."""
    reduction = 2**pyramid
    steps = torch.arange(frames // reduction, device=lengths.device)  # (T',)
    return steps[None, :] < torch.div(lengths, reduction, rounding_mode="floor")[:, None]


class PyramidalListener(nn.Module):
    """Chan et al. 2016's listener, §3.1, eq. (5); see the module docstring.

    Args:
        n_features: ``F``, the width of a frame (40 log-mel bands, 13 MFCCs...).
        d_hidden: ``D``, each direction's LSTM width; the annotations are ``2 D`` wide.
        pyramid: ``p``, the pyramid layers after the first BiLSTM (time shrinks ``2^p``
            times; 0 gives a plain one-layer BiLSTM).
        dropout: on the input of every pyramid layer.
        bidirectional: both directions (the paper), else forward only: annotations ``D`` wide.
    """

    def __init__(
        self, n_features: int, d_hidden: int, pyramid: int, dropout: float = 0.0,
        bidirectional: bool = True,
    ):  # fmt: skip
        super().__init__()
        self.pyramid = pyramid
        self.d_out = (2 if bidirectional else 1) * d_hidden
        widths = [n_features] + [2 * self.d_out] * pyramid  # a pair of annotations
        self.layers = nn.ModuleList(
            nn.LSTM(w, d_hidden, batch_first=True, bidirectional=bidirectional) for w in widths
        )
        self.dropout = nn.Dropout(dropout)

    @property
    def reduction(self) -> int:
        """``2^p``: input frames per annotation."""
        return 2**self.pyramid

    def forward(self, features: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """``features (B, T, F)`` with ``lengths (B,)`` real frames -> annotations ``h
        (B, T', 2 D)`` (``D`` forward only; 0 at padding) and their mask ``(B, T')``,
        ``T' = max(T_b) // 2^p``."""
        lengths = kept_frames(lengths.to(torch.long), self.pyramid)  # (B,)
        if bool((lengths < 1).any()):
            raise ValueError(
                f"an utterance is shorter than the {self.reduction} frames one annotation "
                f"needs (pyramid {self.pyramid}): lengths {lengths.tolist()}"
            )
        x = features[:, : int(lengths.max())]  # (B, T, F): T a multiple of 2^p
        x = _bilstm(self.layers[0], x, lengths)  # (B, T, d), d = self.d_out
        for layer in self.layers[1:]:
            b, t, d = x.shape
            x = x.reshape(b, t // 2, 2 * d)  # (B, T / 2, 2 d): [h_{2i}; h_{2i+1}]
            lengths = torch.div(lengths, 2, rounding_mode="floor")  # (B,)
            x = _bilstm(layer, self.dropout(x), lengths)  # (B, T / 2, d)
        mask = torch.arange(x.size(1), device=x.device)[None, :] < lengths[:, None]  # (B, T')
        return x, mask


def _bilstm(lstm: nn.LSTM, x: Tensor, lengths: Tensor) -> Tensor:
    """Run ``lstm`` over ``x (B, T, D_in)`` packed to ``lengths (B,)``: ``(B, T, d)`` (``d``
    2 D or D), 0 at padding, so no padded frame reaches a real one in either direction."""
    packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, _ = lstm(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))  # (B, T, d)
    return out
