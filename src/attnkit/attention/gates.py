"""Attention gates: additive attention that weighs each pixel of a skip connection.

Oktay et al. 2018, "Attention U-Net: Learning where to look for the pancreas", §2, eqs. (1)-(2):

    q_att = psi^T relu(W_x^T x_i + W_g^T g_i + b_g) + b_psi        (1)
    alpha_i = sigmoid(q_att(x_i, g_i))                              (2)
    x_hat_i = alpha_i * x_i

``x`` is the skip connection's feature map and ``g`` the gating signal from the coarser scale,
resampled to ``x``'s grid. Every pixel ``i`` is one query/key pair: the score is
:meth:`AdditiveScore.score_paired` (the query is the gating signal at the same pixel) and the
normaliser is ``sigmoid`` from :mod:`attnkit.attention.normalisers`, as every attention in
attnkit is a score plus a normaliser. The gate coefficients ``alpha`` come back as ``weights``.

The pixels are flattened channels first, ``(B, C, H*W)``, a view of the maps, and the score's
linear maps run as 1x1 convolutions (``channels_first=True``): the ``(B, H*W, C)`` layout cost
a transposing copy per map and made the gate 1.8x slower than MONAI's block (forward and
backward, B=4, 64 channels, 128x128, one thread); channels first it computes MONAI's numbers
bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnkit.attention import steps
from attnkit.attention.normalisers import resolve_normaliser
from attnkit.attention.scores import AdditiveScore


@dataclass
class GateOutput:
    """What :class:`AttentionGate` returns. Weights are returned, never stored on a module.

    Attributes:
        gated: ``(B, Fx, H, W)`` the skip connection weighted per pixel, ``x * weights``.
        weights: ``(B, 1, H, W)`` the gate coefficients ``alpha`` (Oktay et al. 2018, eq. (2));
            in ``[0, 1]`` with the sigmoid normaliser, 0 where ``mask`` is False.
    """

    gated: Tensor
    weights: Tensor


class AttentionGate(nn.Module):
    """Additive attention gate on a 2D skip connection (Oktay et al. 2018, eqs. (1)-(2)).

    Args:
        x_channels: ``Fx``, the skip connection's channels (the keys).
        g_channels: ``Fg``, the gating signal's channels (the queries).
        inter_channels: ``F_int``, the width of the additive score's hidden layer.
        norm: a BatchNorm after ``W_x``, after ``W_g`` and after ``psi`` (on the channel axis,
            as MONAI's ``AttentionBlock``); without it the gate is eq. (1)-(2) exactly.
        normaliser: ``"sigmoid"`` (the paper's independent gates) or another name from
            :data:`attnkit.attention.NORMALISERS`, or a callable; it runs over the ``H*W``
            pixels of each image (``"softmax"`` makes the pixels compete).

    Parameters: ``W_x`` with bias (``score.W_key``), ``W_g`` and ``b_g`` (``score.W_query``),
    ``psi`` and ``b_psi`` (``score.v``); ``(Fx + Fg + 3) * F_int + 1`` in all, plus
    ``2 * (2 * F_int + 1)`` for the BatchNorms.
    """

    def __init__(
        self,
        x_channels: int,
        g_channels: int,
        inter_channels: int,
        *,
        norm: bool = False,
        normaliser="sigmoid",
    ) -> None:
        super().__init__()
        if normaliser == "sample":
            raise ValueError(
                "an attention gate needs deterministic weights: choose normaliser 'sigmoid' "
                "(Oktay et al. 2018) or another one than 'sample'"
            )
        self.normaliser = normaliser
        self._normalise = resolve_normaliser(normaliser)  # fails early on an unknown name
        self.score = AdditiveScore(
            g_channels, x_channels, inter_channels, activation="relu", key_bias=True, out_bias=True
        )
        self.norm_x = nn.BatchNorm1d(inter_channels) if norm else nn.Identity()
        self.norm_g = nn.BatchNorm1d(inter_channels) if norm else nn.Identity()
        self.norm_psi = nn.BatchNorm1d(1) if norm else nn.Identity()

    def forward(self, x: Tensor, g: Tensor, mask: Tensor | None = None) -> GateOutput:
        """Gate the skip connection ``x`` with the gating signal ``g``.

        Args:
            x: ``(B, Fx, H, W)`` the skip connection.
            g: ``(B, Fg, h, w)`` the gating signal from the coarser scale; projected by
                ``W_g`` on its own grid, then resampled bilinearly (``align_corners=False``) to
                ``(H, W)`` when the sizes differ.
            mask: optional bool ``(B, H, W)`` or ``(B, 1, H, W)`` (or broadcastable), True =
                may attend; a masked pixel gets score ``-inf``, so weight exactly 0.
        Returns:
            :class:`GateOutput` with ``gated`` ``(B, Fx, H, W)`` and ``weights``
            ``(B, 1, H, W)``.
        """
        b, _, h, w = x.shape
        # channels first, as the maps come: flattening is a view, the projections 1x1 convolutions
        keys = x.flatten(2)  # (B, Fx, H*W)
        hidden_x = self.norm_x(self.score.prepare_key(keys, channels_first=True))  # (B, F_int, H*W)
        hidden_g = self._gating(g, h, w)  # (B, F_int, H*W)
        # eq. (1): psi^T relu(W_x x + W_g g + b_g) + b_psi at every pixel
        scores = self.score.score_paired_prepared(hidden_g, hidden_x, channels_first=True)
        scores = self.norm_psi(scores.unsqueeze(1)).squeeze(1)  # (B, H*W) via (B, 1, H*W)
        alpha = self._normalised(scores, mask, b, h, w)  # (B, H*W)  eq. (2)
        weights = alpha.reshape(b, 1, h, w)  # (B, 1, H, W)
        return GateOutput(gated=x * weights, weights=weights)

    def _gating(self, g: Tensor, h: int, w: int) -> Tensor:
        """``W_g g + b_g`` (and its norm) on ``g``'s own, coarser grid, then resampled to
        ``(h, w)``: the 1x1 projection commutes with bilinear resampling (both linear, the
        resampling weights summing to 1), so projecting first does the same work on a quarter
        of the pixels; only a train-mode BatchNorm sees the coarse grid's statistics."""
        gh, gw = g.shape[-2:]
        hidden = self.norm_g(self.score.prepare_query(g.flatten(2), channels_first=True))
        if (gh, gw) == (h, w):
            return hidden  # (B, F_int, H*W)
        grid = hidden.reshape(g.size(0), -1, gh, gw)  # (B, F_int, h_g, w_g)
        grid = F.interpolate(grid, size=(h, w), mode="bilinear", align_corners=False)
        return grid.flatten(2)  # (B, F_int, H*W)

    def _normalised(self, scores: Tensor, mask: Tensor | None, b: int, h: int, w: int) -> Tensor:
        """The normaliser over each image's ``H*W`` pixels, masked pixels at exactly 0.

        An image with every pixel masked gets zero weights, never NaN: the mask step and the
        empty-row rule of :mod:`attnkit.attention.steps`, as :func:`attnkit.attention.attend`.
        """
        if mask is None:
            return self._normalise(scores)
        if mask.dim() == 4:
            mask = mask.squeeze(1)  # (B, H, W), as the weights' channel axis is dropped here
        allowed = torch.broadcast_to(mask, (b, h, w)).reshape(b, h * w)  # (B, H*W)
        empty = steps.empty_rows(allowed)  # (B, 1): an image with no pixel left, or None
        weights = self._normalise(steps.mask(scores, allowed, empty))  # -inf -> exactly 0
        return steps.empty_row_rule(empty, weights)[0]
