"""Rotary position embeddings (RoPE; Su et al. 2021, "RoFormer", §3.2 and eq. (34)).

Each pair of features ``(x_2i, x_2i+1)`` of a query or key at position ``m`` is rotated by the
angle ``m theta_i``, ``theta_i = base^(-2i / d)``::

    R_m x = (x_2i cos m theta_i - x_2i+1 sin m theta_i,  x_2i sin m theta_i + x_2i+1 cos m theta_i)

Rotations compose, ``(R_m q) . (R_n k) = q . R_(n - m) k``, so the score depends on the
offset ``n - m`` alone: absolute positions in, relative positions out, and nothing is added to
the embeddings or the scores. Keys are rotated once, at their own position, so a decoder caches
them rotated.
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnkit.attention.functional import attend
from attnkit.attention.output import AttentionOutput


def rotary_frequencies(dim: int, base: float = 10000.0) -> Tensor:
    """``theta_i = base^(-2i / d)`` for ``i = 0 .. d/2 - 1`` ``(d/2,)`` (Su et al. §3.2.2)."""
    if dim % 2:
        raise ValueError(f"rotary embeddings need an even head width, got {dim}")
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (d/2,)


def rotation_angles(positions: Tensor, dim: int, base: float = 10000.0) -> tuple[Tensor, Tensor]:
    """``(cos m theta_i, sin m theta_i)``, each ``(.., T, d/2)``, for ``positions`` ``(.., T)``;
    computed in float64."""
    theta = rotary_frequencies(dim, base).to(positions.device)  # (d/2,)
    angles = positions.to(torch.float64).unsqueeze(-1) * theta  # (.., T, d/2)
    return angles.cos(), angles.sin()


def apply_rotation(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate each pair ``(x_2i, x_2i+1)`` of ``x (.., T, d)`` by the angle whose cosine and
    sine are ``cos``, ``sin`` ``(.., T, d/2)`` (Su et al. 2021, eq. (34)); ``x``'s dtype."""
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    pairs = x.unflatten(-1, (-1, 2))  # (.., T, d/2, 2): (x_2i, x_2i+1)
    even, odd = pairs[..., 0], pairs[..., 1]  # (.., T, d/2) each
    turned = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return turned.flatten(-2)  # (.., T, d)


def rotate(x: Tensor, positions: Tensor, base: float = 10000.0) -> Tensor:
    """``R_m x`` for ``x (.., T, d)`` at ``positions`` ``(T,)`` (or broadcastable ``(.., T)``).

    The angles are computed in float64 and the result is returned in ``x``'s dtype.
    """
    return apply_rotation(x, *rotation_angles(positions, x.size(-1), base))


def attend_rope(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    query_start: int = 0,
    key_start: int = 0,
    base: float = 10000.0,
    **options,
) -> AttentionOutput:
    """:func:`attend` with queries and keys rotated to their positions (Su et al. 2021):
    queries at ``query_start ..``, keys at ``key_start ..``; ``(B, H, T, D)`` inputs."""
    device = query.device
    q_pos = torch.arange(query_start, query_start + query.size(-2), device=device)  # (Tq,)
    k_pos = torch.arange(key_start, key_start + key.size(-2), device=device)  # (Tk,)
    return attend(rotate(query, q_pos, base), rotate(key, k_pos, base), value, mask, **options)
