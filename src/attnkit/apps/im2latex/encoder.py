"""The image side of im2markup (Deng et al. 2017, §3): a CNN, then a row encoder.

- :class:`FormulaCNN`: stages of ``conv 3x3 -> batch norm -> ReLU -> max-pool``, a small
  version of the paper's VGG-like stack (its Table 5), whose pools shrink rows and columns by
  different amounts (``pools``; the product is the grid's stride).
- :class:`RowEncoder`: "a recurrent neural network over each of the rows of the feature grid"
  (§3, eq. (1)): a bidirectional LSTM runs left to right and right to left along every row;
  its initial state is a learned vector per row index, the paper's "positional embeddings"
  that tell the decoder which row a cell is on. Without it (``row_encoder: false``) the
  annotations are the CNN's features, the CNN-only ablation of the paper.

Shapes: images ``(B, 1, H, W)``, features ``(B, C, R, Cc)`` with ``R = H / stride_r``,
annotations ``(B, R * Cc, D)`` row-major.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn


class FormulaCNN(nn.Module):
    """``conv3x3 -> BN -> ReLU -> MaxPool(pool)`` per stage; ``pool (1, 1)`` skips pooling."""

    def __init__(self, channels: Sequence[int], pools: Sequence[Sequence[int]]) -> None:
        super().__init__()
        if len(channels) != len(pools):
            raise ValueError(f"{len(channels)} channel widths but {len(pools)} pools")
        layers: list[nn.Module] = []
        width = 1
        for out, pool in zip(channels, pools, strict=True):
            layers += [nn.Conv2d(width, out, 3, padding=1, bias=False), nn.BatchNorm2d(out)]
            layers.append(nn.ReLU(inplace=True))
            if tuple(pool) != (1, 1):
                layers.append(nn.MaxPool2d(tuple(pool), tuple(pool)))
            width = out
        self.net = nn.Sequential(*layers)
        self.out_channels = width

    def forward(self, images: Tensor) -> Tensor:
        return self.net(images)  # (B, 1, H, W) -> (B, C, R, Cc)


class RowEncoder(nn.Module):
    """Bidirectional LSTM along each row with a learned initial state per row (Deng et al.
    §3, "Row Encoder"): ``V~_{h,w} = RNN(V~_{h,w-1}, V_{h,w})``, ``V~_{h,0}`` = row ``h``'s
    positional embedding."""

    def __init__(self, d_in: int, d_hidden: int, max_rows: int) -> None:
        super().__init__()
        self.rnn = nn.LSTM(d_in, d_hidden, batch_first=True, bidirectional=True)
        self.initial = nn.Embedding(max_rows, 4 * d_hidden)  # (h, c) x (forward, backward)
        self.d_hidden, self.max_rows = d_hidden, max_rows

    def forward(self, features: Tensor) -> Tensor:
        """``features (B, C, R, Cc)`` -> annotations ``(B, R * Cc, 2 * d_hidden)``."""
        b, c, rows, cols = features.shape
        if rows > self.max_rows:
            raise ValueError(
                f"the image has {rows} feature rows but the row encoder has learned initial "
                f"states for {self.max_rows}; raise model.max_rows or lower data.max_height"
            )
        seq = features.permute(0, 2, 3, 1).reshape(b * rows, cols, c)  # (B * R, Cc, C)
        index = torch.arange(rows, device=features.device).repeat(b)  # (B * R,) row of each
        init = self.initial(index).view(b * rows, 4, self.d_hidden)  # (B * R, 4, d)
        h0 = init[:, :2].transpose(0, 1).contiguous()  # (2, B * R, d): forward, backward
        c0 = init[:, 2:].transpose(0, 1).contiguous()  # (2, B * R, d)
        out, _ = self.rnn(seq, (h0, c0))  # (B * R, Cc, 2d)
        return out.reshape(b, rows * cols, 2 * self.d_hidden)  # (B, R * Cc, 2d) row-major
