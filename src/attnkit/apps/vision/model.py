"""The Vision Transformer (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words", §3.1).

An image ``(C, H, W)`` is cut into ``N = HW / P^2`` patches of ``P x P`` pixels; each flattened
patch is a token. With a learned class token and learned 1-D positions (eqs. (1)-(4))::

    z_0 = [x_class; x_p^1 E; ...; x_p^N E] + E_pos      E (P^2 C, D), E_pos (N + 1, D)   (1)
    z_l = TransformerEncoderLayer(z_{l-1}),  l = 1 .. L  (pre-LN: MSA and MLP blocks)    (2, 3)
    y   = LN(z_L^0),   logits = y W_head                                                  (4)

The encoder is attnkit's :class:`~attnkit.modules.transformer.TransformerEncoder`, so the
self-attention weights of every layer come back on request, ``(B, H, N + 1, N + 1)`` per layer,
token 0 being the class token and token ``1 + r * (W / P) + c`` the patch in row ``r``, column
``c``. :func:`rollout_maps` follows them down to the patches (Abnar & Zuidema 2020) and
:func:`delete_patches` erases patches for the deletion test.

The hybrid (§3.1, "Hybrid Architecture": patches of a CNN feature map) puts two 3 x 3
convolutions (same size, GELU) before the patches: each token then sees a few pixels beyond
its patch, an inductive bias that small data sets such as the digits need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import torch
from torch import Tensor, nn

from attnkit import devices
from attnkit.config import Checked, bounded
from attnkit.interpret.rollout import attention_rollout
from attnkit.modules.positional import LearnedPositionalEmbedding
from attnkit.modules.transformer import TransformerEncoder, TransformerEncoderLayer

Stem = Literal["patches", "conv"]
STEMS = get_args(Stem)


@dataclass
class ViTConfig(Checked):
    """The shape of a Vision Transformer (the ``model:`` section of an image config)."""

    image_size: int = bounded(8, ge=1)  # H = W, in pixels (images are resized to it)
    channels: int = bounded(1, choices=(1, 3))  # C: 1 (grey) or 3 (RGB)
    # P; must divide image_size (Dosovitskiy et al.: 16 for 224 x 224)
    patch_size: int = bounded(2, ge=1)
    d_model: int = bounded(64, ge=1)  # D, the token width
    num_heads: int = bounded(4, ge=1)
    num_layers: int = bounded(4, ge=1)  # L
    d_ff: int = bounded(128, ge=1)  # width of the MLP block (ViT-Base: 4 D)
    dropout: float = bounded(0.1, ge=0, lt=1)  # after the embedding and dense layers but q, k, v
    # on the attention weights: none in the paper (Dosovitskiy et al. 2021, App. B.1: dropout
    # "after every dense layer except for the qkv-projections"); 0 also lets the fused kernel run
    attention_dropout: float = bounded(0.0, ge=0, lt=1)
    activation: Literal["gelu", "relu"] = "gelu"  # gelu (the paper) or relu
    num_classes: int = bounded(10, ge=2)
    # patches (ViT) or conv (the hybrid of Dosovitskiy et al. §3.1)
    stem: Stem = bounded("patches", choices=STEMS)
    stem_channels: int = bounded(32, ge=1)  # width of the hybrid's two 3 x 3 convolutions

    def check(self) -> None:
        if self.image_size % self.patch_size:
            raise ValueError(
                f"patch_size {self.patch_size} does not divide image_size {self.image_size}; "
                "choose a divisor"
            )
        if self.d_model % self.num_heads:
            raise ValueError(
                f"num_heads {self.num_heads} does not divide d_model {self.d_model}; "
                "choose a divisor"
            )

    @property
    def grid(self) -> int:
        """Patches per side, ``H / P``."""
        return self.image_size // self.patch_size

    @property
    def num_patches(self) -> int:
        """``N = HW / P^2``."""
        return self.grid**2


def patchify(images: Tensor, patch_size: int) -> Tensor:
    """``(B, C, H, W)`` -> ``(B, N, P^2 C)``, patches in row-major order (Dosovitskiy §3.1)."""
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)  # (B, C, H/P, P, W/P, P)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (B, H/P, W/P, P, P, C)
    return x.reshape(b, (h // p) * (w // p), p * p * c)  # (B, N, P^2 C)


@dataclass
class ViTOutput:
    """``logits (B, classes)``; ``attentions``: ``L`` tensors ``(B, H, N + 1, N + 1)`` when
    asked for (token 0 is the class token), else None."""

    logits: Tensor
    attentions: tuple[Tensor, ...] | None = None


@dataclass
class Prediction:
    """What :meth:`ViT.predict` returns: ``classes (B,)``, ``probabilities (B, classes)``,
    ``attentions`` (as :class:`ViTOutput`) and the rollout ``maps (B, H/P, W/P)``."""

    classes: Tensor
    probabilities: Tensor
    attentions: tuple[Tensor, ...]
    maps: np.ndarray


class ViT(nn.Module):
    """Patches -> linear embedding -> class token + positions -> encoder -> head (eqs. (1)-(4)).

    Pre-LN layers with a final LayerNorm, as the paper; the head reads the class token only.
    ``forward(images (B, C, H, W), need_weights=False) -> ViTOutput``.
    """

    def __init__(self, config: ViTConfig) -> None:
        super().__init__()
        self.config = config
        d = config.d_model
        channels = config.channels
        self.stem = None
        if config.stem == "conv":
            channels = config.stem_channels
            self.stem = nn.Sequential(
                nn.Conv2d(config.channels, channels, 3, padding=1),
                nn.GELU(),
                nn.Conv2d(channels, channels, 3, padding=1),
                nn.GELU(),
            )
        self.patch_embed = nn.Linear(config.patch_size**2 * channels, d)  # E
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))  # x_class
        nn.init.normal_(self.cls_token, std=0.02)
        self.positions = LearnedPositionalEmbedding(config.num_patches + 1, d)  # E_pos
        self.dropout = nn.Dropout(config.dropout)
        layer = TransformerEncoderLayer(
            d,
            config.num_heads,
            config.d_ff,
            dropout=config.dropout,
            activation=config.activation,
            norm_first=True,
            attention_dropout=config.attention_dropout,
        )
        self.encoder = TransformerEncoder.from_layer(layer, config.num_layers, nn.LayerNorm(d))
        self.head = nn.Linear(d, config.num_classes)

    def embed(self, images: Tensor) -> Tensor:
        """``z_0`` of eq. (1): ``(B, N + 1, D)``, the class token first."""
        cfg = self.config
        expected = (cfg.channels, cfg.image_size, cfg.image_size)
        if images.dim() != 4 or tuple(images.shape[1:]) != expected:
            raise ValueError(
                f"expected images (B, {', '.join(map(str, expected))}), got {tuple(images.shape)}"
            )
        features = self.stem(images) if self.stem is not None else images  # (B, C', H, W)
        tokens = self.patch_embed(patchify(features, cfg.patch_size))  # (B, N, D)
        cls = self.cls_token.expand(images.size(0), -1, -1)  # (B, 1, D)
        z = torch.cat([cls, tokens], dim=1)  # (B, N + 1, D)
        return self.dropout(z + self.positions(z.size(1)))  # (B, N + 1, D)

    def forward(self, images: Tensor, need_weights: bool = False) -> ViTOutput:
        out = self.encoder(self.embed(images), need_weights=need_weights)
        logits = self.head(out.last_hidden[:, 0])  # (B, classes): y = LN(z_L^0), eq. (4)
        return ViTOutput(logits, out.attentions)

    @torch.no_grad()
    def predict(self, images: Tensor, residual: float = 0.5) -> Prediction:
        """Classes, probabilities, every layer's attention and the rollout maps of ``images``
        (evaluation mode for the call; the previous mode is restored), computed on the model's
        device and returned on the CPU."""
        was_training = self.training
        self.eval()
        try:
            out = self(images.to(devices.of(self)), need_weights=True)
        finally:
            self.train(was_training)
        probs = out.logits.softmax(-1).cpu()  # (B, classes)
        attentions = [a.cpu() for a in out.attentions]
        maps = rollout_maps(attentions, self.config.grid, residual)
        return Prediction(probs.argmax(-1), probs, attentions, maps)


def rollout_maps(attentions, grid: int, residual: float = 0.5) -> np.ndarray:
    """The class token's rollout over the patches, ``(B, grid, grid)`` (Abnar & Zuidema 2020).

    For each image, :func:`attnkit.interpret.rollout.attention_rollout` of its ``L`` layers
    ``(H, N + 1, N + 1)`` gives ``R (N + 1, N + 1)``; the map is row 0 (the class token) without
    column 0 (its share of itself), in patch order. Each map sums to ``1 - R[0, 0]``.
    """
    batch = attentions[0].size(0)
    maps = np.empty((batch, grid, grid))
    for b in range(batch):
        r = attention_rollout([layer[b] for layer in attentions], residual)  # (N + 1, N + 1)
        maps[b] = r[0, 1:].reshape(grid, grid)  # (grid, grid)
    return maps


def delete_patches(
    images: Tensor, patches: Tensor, patch_size: int, fill: Tensor | float = 0.0
) -> Tensor:
    """A copy of ``images (B, C, H, W)`` with the patches ``patches (B, k)`` (row-major indices)
    replaced by ``fill``: a number, or an image ``(C, H, W)`` whose pixels are copied (e.g. the
    mean image for mean-filling)."""
    b, c, h, w = images.shape
    grid_w = w // patch_size
    patches = patches.to(images.device)
    keep = torch.ones(b, h // patch_size, grid_w, dtype=torch.bool, device=images.device)
    rows = torch.arange(b, device=images.device).unsqueeze(1).expand_as(patches)  # (B, k)
    keep[rows, patches // grid_w, patches % grid_w] = False
    keep = keep.repeat_interleave(patch_size, 1).repeat_interleave(patch_size, 2)  # (B, H, W)
    fill = torch.as_tensor(fill, dtype=images.dtype, device=images.device).expand_as(images)
    return torch.where(keep.unsqueeze(1), images, fill)  # (B, C, H, W)


def top_patches(maps: np.ndarray, k: int) -> Tensor:
    """Indices ``(B, k)`` of each map's ``k`` highest patches (row-major), highest first."""
    flat = torch.as_tensor(maps.reshape(maps.shape[0], -1))  # (B, N)
    return flat.argsort(dim=1, descending=True, stable=True)[:, :k]


def random_patches(batch: int, num_patches: int, k: int, generator: torch.Generator) -> Tensor:
    """``k`` distinct random patch indices per image, ``(B, k)``."""
    noise = torch.rand(batch, num_patches, generator=generator)  # (B, N)
    return noise.argsort(dim=1)[:, :k]


@torch.no_grad()
def accuracy(model: ViT, images: Tensor, labels: Tensor, batch_size: int = 512) -> float:
    """Share of ``images (n, C, H, W)`` classified as ``labels (n,)`` (evaluation mode)."""
    model.eval()
    correct = 0
    for i in range(0, labels.numel(), batch_size):
        logits = model(images[i : i + batch_size]).logits  # (b, classes)
        correct += int((logits.argmax(-1) == labels[i : i + batch_size]).sum())
    return correct / max(labels.numel(), 1)


def deletion_test(
    model: ViT, images: Tensor, labels: Tensor, ks=(1, 2, 4, 8), fill: str = "zero", seed: int = 0
) -> list[dict]:
    """Accuracy after deleting, per image, the ``k`` patches its rollout map ranks highest vs
    ``k`` random patches: ``[{"k", "rollout", "random"}, ...]``. If the maps (computed on the
    intact images) point at what the model uses, the first must fall faster (the deletion
    metric of Samek et al. 2017 and Petsiuk et al. 2018, with the random baseline beside it).

    Args:
        fill: ``"zero"`` (the digits' background) or ``"mean"`` (the mean of ``images``).
        seed: of the random patches.
    """
    if fill not in ("zero", "mean"):
        raise ValueError(f"fill must be 'zero' or 'mean', got {fill!r}")
    n, p = model.config.num_patches, model.config.patch_size
    if any(k < 0 or k > n for k in ks):
        raise ValueError(f"k must be between 0 and {n} (the number of patches), got {list(ks)}")
    value = images.mean(0) if fill == "mean" else 0.0  # (C, H, W) or a number
    maps = model.predict(images).maps  # (n, grid, grid)
    g = torch.Generator().manual_seed(seed)
    rows = []
    for k in ks:
        ranked = delete_patches(images, top_patches(maps, k), p, value)  # (n, C, H, W)
        rand = delete_patches(images, random_patches(labels.numel(), n, k, g), p, value)
        rows.append(
            {
                "k": k,
                "rollout": accuracy(model, ranked, labels),
                "random": accuracy(model, rand, labels),
            }
        )
    return rows
