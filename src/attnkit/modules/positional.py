"""Position information for attention models, which are otherwise order-blind.

- :class:`SinusoidalPositionalEncoding` (Vaswani et al. 2017, §3.5):
  ``PE(pos, 2i) = sin(pos / 10000^(2i / D))``, ``PE(pos, 2i + 1) = cos(pos / 10000^(2i / D))``.
  Fixed, defined for any position.
- :class:`LearnedPositionalEmbedding`: one trained vector per position up to ``max_len``
  (Gehring et al. 2017; BERT; Vaswani et al. 2017 §3.5 report "nearly identical results").

Both return the encodings (they do not add them), called as ``module(length, offset)``:
positions ``offset, offset + 1, ..., offset + length - 1``. The ``offset`` is what
step-by-step decoding needs: step ``t`` with a key/value cache embeds the single position
``t``. It is an ``int`` (the same for the whole batch) or a ``(B,)`` tensor (one per row).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

POSITIONAL = ("sinusoidal", "learned", "none")


def positions(length: int, offset: int | Tensor = 0, device=None) -> Tensor:
    """Position indices ``offset + [0, length)``: ``(1, T)`` for an int, ``(B, T)`` for a
    ``(B,)`` tensor offset."""
    if isinstance(offset, Tensor):
        if offset.dim() != 1:
            raise ValueError(f"a tensor offset must be (B,), got shape {tuple(offset.shape)}")
        steps = torch.arange(length, device=offset.device)  # (T,)
        return offset.long().unsqueeze(1) + steps  # (B, T)
    return torch.arange(offset, offset + length, device=device).unsqueeze(0)  # (1, T)


class SinusoidalPositionalEncoding(nn.Module):
    """Fixed sinusoids of geometrically spaced wavelengths ``2pi .. 10000 * 2pi``.

    Vaswani et al. 2017, §3.5: for any fixed ``k``, ``PE(pos + k)`` is a linear function of
    ``PE(pos)``, so relative offsets are easy to attend by. Computed on the fly from the
    position indices, so there is no length limit.

    Args:
        d_model: width D (odd widths drop the last cosine).
        base: the 10000 of the formula.
    """

    def __init__(self, d_model: int, base: float = 10000.0) -> None:
        super().__init__()
        self.d_model = d_model
        half = (d_model + 1) // 2
        # 1 / base^(2i / D) for i = 0 .. ceil(D/2) - 1
        inv_freq = torch.exp(-math.log(base) * torch.arange(0, 2 * half, 2).float() / d_model)
        self.register_buffer("inv_freq", inv_freq, persistent=False)  # (ceil(D/2),)

    def forward(self, length: int, offset: int | Tensor = 0) -> Tensor:
        """Encodings of positions ``offset .. offset + length - 1``.

        Returns:
            ``(1, T, D)`` for an int ``offset``; ``(B, T, D)`` for a ``(B,)`` tensor.
        """
        pos = positions(length, offset, self.inv_freq.device)  # (B|1, T)
        angles = pos.unsqueeze(-1).float() * self.inv_freq  # (B|1, T, ceil(D/2))
        pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (B|1, T, ceil(D/2), 2)
        return pe.flatten(-2)[..., : self.d_model]  # (B|1, T, D): sin, cos interleaved


class LearnedPositionalEmbedding(nn.Module):
    """A trained vector per position ``0 .. max_len - 1``.

    Args:
        max_len: number of positions; a longer sequence is an error (raise ``max_len``).
        d_model: width D.
    """

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.weight, std=d_model**-0.5)

    def forward(self, length: int, offset: int | Tensor = 0) -> Tensor:
        """``(1, T, D)`` for an int ``offset``; ``(B, T, D)`` for a ``(B,)`` tensor."""
        pos = positions(length, offset, self.weight.device)  # (B|1, T)
        if pos.numel() and int(pos.max()) >= self.max_len:
            raise ValueError(
                f"position {int(pos.max())} is beyond the learned positions (max_len="
                f"{self.max_len}); build the model with a larger max_len or use 'sinusoidal'"
            )
        return self.weight[pos]  # (B|1, T, D)


def build_positional(kind: str, d_model: int, max_len: int = 512) -> nn.Module | None:
    """``"sinusoidal"``, ``"learned"`` or ``"none"`` (None: the embeddings carry no position;
    a relative scheme in the attention does, :mod:`attnkit.attention.positions`)."""
    if kind == "none":
        return None
    if kind == "sinusoidal":
        return SinusoidalPositionalEncoding(d_model)
    if kind == "learned":
        return LearnedPositionalEmbedding(max_len, d_model)
    raise ValueError(f"unknown positional encoding {kind!r}; choose one of {POSITIONAL}")
