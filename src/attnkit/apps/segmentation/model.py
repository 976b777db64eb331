"""U-Net (Ronneberger et al. 2015) and Attention U-Net (Oktay et al. 2018) on one backbone.

Embed → Encode → Attend → Predict, for images::

    image (B, C, H, W) ──head──▶ level 0 ──down──▶ level 1 ── ... ──▶ level L-1 (the bottom)
                                   │ skip              │ skip
    logits (B, 1, H, W) ◀──1×1── decoder 0 ◀──up── decoder 1 ◀── ... ◀──up──┘
                                   ▲ gate(skip, coarser decoder features)

Both models have the same encoder, decoder and widths; the Attention U-Net alone passes each
skip connection through an :class:`~attnkit.attention.gates.AttentionGate` (additive attention
with a sigmoid normaliser, Oktay et al. eq. 1-2) whose gating signal is the decoder's features
one scale coarser, resampled to the skip's grid inside the gate. So the gates are the only
difference, and their coefficients come back as ``gates`` for pictures. The block layout
follows MONAI's ``AttentionUnet`` (two 3×3 conv-BN-ReLU per level, the first strided to
downsample; a strided transposed convolution to upsample; one 3×3 conv after the concatenation),
so the two can be timed at the same size. Deep supervision (Oktay et al. §2, after Lee et al.
2015) adds a 1×1 prediction at every decoder level, upsampled and trained with the main one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnkit import devices
from attnkit.attention.gates import AttentionGate
from attnkit.config import Checked, bounded


@dataclass
class UNetConfig(Checked):
    """The network: ``channels`` per level (top first), gates on or off, deep supervision."""

    in_channels: int = bounded(1, ge=1)
    channels: tuple[int, ...] = bounded((16, 32, 64, 128), ge=2)  # two or more levels
    gates: bool = True  # Attention U-Net; false: the plain U-Net with the same backbone
    deep_supervision: bool = False  # auxiliary 1×1 predictions at the coarser decoder levels
    gate_norm: bool = True  # BatchNorm inside the gates (as MONAI's AttentionBlock)

    def check(self) -> None:
        if len(self.channels) < 2:
            raise ValueError(f"channels needs two or more levels, got {list(self.channels)}")

    @property
    def factor(self) -> int:
        """Image sides must be multiples of this (one halving per level below the top)."""
        return 2 ** (len(self.channels) - 1)


@dataclass
class SegmentationOutput:
    """``logits (B, 1, H, W)`` (foreground before the sigmoid); ``gates``: each gate's
    coefficients ``(B, 1, H_l, W_l)``, finest level first (empty for the U-Net); ``aux``:
    deep-supervision logits at full size, one per coarser decoder level."""

    logits: Tensor
    gates: list[Tensor] = field(default_factory=list)
    aux: list[Tensor] = field(default_factory=list)


def conv_bn_relu(c_in: int, c_out: int, stride: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, stride, 1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]


class Down(nn.Sequential):
    """Two 3×3 conv-BN-ReLU; the first with ``stride`` (2 halves the grid)."""

    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__(*conv_bn_relu(c_in, c_out, stride), *conv_bn_relu(c_out, c_out))


class Up(nn.Module):
    """One decoder level: upsample the coarser features ``(B, C_low, h, w)`` to the skip's
    grid ``(B, C, 2h, 2w)``, optionally gate the skip with them, concatenate, merge."""

    def __init__(self, c_low: int, c: int, *, gate: bool, gate_norm: bool) -> None:
        super().__init__()
        self.up = nn.Sequential(
            nn.ConvTranspose2d(c_low, c, 3, stride=2, padding=1, output_padding=1),
            nn.BatchNorm2d(c),
            nn.ReLU(inplace=True),
        )
        self.gate = AttentionGate(c, c_low, max(c // 2, 1), norm=gate_norm) if gate else None
        self.merge = nn.Sequential(*conv_bn_relu(2 * c, c))

    def forward(self, low: Tensor, skip: Tensor) -> tuple[Tensor, Tensor | None]:
        up = self.up(low)  # (B, C, H, W)
        weights = None
        if self.gate is not None:
            gated = self.gate(skip, low)  # gating signal: the coarser scale (Oktay et al. §2)
            skip, weights = gated.gated, gated.weights  # (B, C, H, W), (B, 1, H, W)
        return self.merge(torch.cat([skip, up], dim=1)), weights  # (B, C, H, W)


class UNet(nn.Module):
    """U-Net, or with ``cfg.gates`` the Attention U-Net; one foreground logit per pixel."""

    def __init__(self, cfg: UNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        c = list(cfg.channels)
        self.head = Down(cfg.in_channels, c[0], stride=1)
        self.down = nn.ModuleList(Down(c[i - 1], c[i], stride=2) for i in range(1, len(c)))
        self.up = nn.ModuleList(
            Up(c[i + 1], c[i], gate=cfg.gates, gate_norm=cfg.gate_norm) for i in range(len(c) - 1)
        )
        self.out = nn.Conv2d(c[0], 1, 1)
        aux = range(1, len(c) - 1) if cfg.deep_supervision else ()
        self.aux = nn.ModuleList(nn.Conv2d(c[i], 1, 1) for i in aux)

    def forward(self, images: Tensor) -> SegmentationOutput:
        """``images (B, C, H, W)``, H and W multiples of ``cfg.factor``."""
        self._check(images)
        skips = [self.head(images)]  # level 0: (B, c0, H, W)
        for down in self.down:
            skips.append(down(skips[-1]))  # level l: (B, c_l, H / 2^l, W / 2^l)
        x, gates, levels = skips.pop(), [], []
        for level in reversed(range(len(self.up))):
            x, weights = self.up[level](x, skips[level])  # (B, c_level, H / 2^level, ...)
            levels.append(x)
            if weights is not None:
                gates.append(weights)
        size = images.shape[-2:]
        aux = [
            F.interpolate(head(levels[-1 - i]), size=size, mode="bilinear", align_corners=False)
            for i, head in zip(range(1, len(self.up)), self.aux, strict=False)
        ]
        return SegmentationOutput(self.out(x), gates[::-1], aux)

    def _check(self, images: Tensor) -> None:
        if images.dim() != 4 or images.size(1) != self.cfg.in_channels:
            raise ValueError(
                f"images must be (B, {self.cfg.in_channels}, H, W), got {tuple(images.shape)}"
            )
        h, w = images.shape[-2:]
        f = self.cfg.factor
        if h % f or w % f:
            raise ValueError(
                f"image sides must be multiples of {f} ({len(self.cfg.channels)} levels), got "
                f"{h} x {w}; pad or resize the images, or use fewer channels levels"
            )

    @torch.no_grad()
    def predict(self, images: Tensor) -> SegmentationOutput:
        """Evaluation mode; ``logits`` become probabilities in [0, 1]. Computed on the model's
        device, returned on the CPU."""
        self.eval()
        out = self(images.to(devices.of(self)))
        gates = [g.cpu() for g in out.gates]
        return SegmentationOutput(torch.sigmoid(out.logits).cpu(), gates, [])
