"""Boolean attention masks. One convention everywhere: **True = may attend**.

This is the convention of :func:`torch.nn.functional.scaled_dot_product_attention`. The opposite
convention of :class:`torch.nn.MultiheadAttention` (True = blocked) is converted only at that
boundary, by :func:`to_blocked`.

Every helper returns a mask that broadcasts against scores of shape ``(B, H, Tq, Tk)``.
"""

from __future__ import annotations

import torch
from torch import Tensor


def padding_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Mask of real (non-padding) positions from sequence lengths.

    Args:
        lengths: ``(B,)`` integer lengths.
        max_len: padded length ``T``; defaults to ``lengths.max()``.

    Returns:
        ``(B, T)`` bool, True where the position holds a real token.
    """
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-d (B,), got shape {tuple(lengths.shape)}")
    if max_len is None:
        max_len = int(lengths.max().item()) if lengths.numel() else 0
    if lengths.numel() and int(lengths.max().item()) > max_len:
        raise ValueError(f"a length ({int(lengths.max())}) exceeds max_len={max_len}")
    positions = torch.arange(max_len, device=lengths.device)  # (T,)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)  # (B, T)


def key_padding_mask(keep: Tensor) -> Tensor:
    """Turn a ``(B, Tk)`` keep-mask of keys into an attention mask ``(B, 1, 1, Tk)``.

    Every query (and every head) may attend to the real keys of its own sequence.
    """
    if keep.dim() != 2 or keep.dtype != torch.bool:
        raise ValueError(f"expected a bool (B, Tk) mask, got {keep.dtype} {tuple(keep.shape)}")
    return keep[:, None, None, :]  # (B, 1, 1, Tk)


def causal_mask(tq: int, tk: int | None = None, *, device: torch.device | None = None) -> Tensor:
    """Lower-triangular mask: query ``i`` may attend to keys ``j <= i + (tk - tq)``.

    With ``tk > tq`` the queries are the *last* ``tq`` positions of a sequence of length ``tk``
    (incremental decoding with a key/value cache), so the diagonal is shifted by ``tk - tq``.

    Returns:
        ``(Tq, Tk)`` bool.
    """
    tk = tq if tk is None else tk
    if tk < tq:
        raise ValueError(f"causal mask needs tk >= tq, got tq={tq}, tk={tk}")
    return torch.ones(tq, tk, dtype=torch.bool, device=device).tril(diagonal=tk - tq)


def sliding_window_mask(
    tq: int, tk: int | None = None, *, window: int, sinks: int = 0, device=None
) -> Tensor:
    """Causal sliding-window mask: query ``i`` may attend key ``j`` when ``i - W < j <= i``,
    its own position and the ``W - 1`` before it (Beltagy et al. 2020, "Longformer", §3.1;
    Jiang et al. 2023, "Mistral 7B", §2), or when ``j < S``, one of the first ``sinks`` keys
    (the attention sinks of Xiao et al. 2023, "StreamingLLM", §3.2).

    As in :func:`causal_mask`, with ``tk > tq`` the queries are the last ``tq`` of ``tk``
    positions. Recomputing a sequence under this mask equals decoding it step by step with a
    cache that keeps the sinks and the last ``W - 1`` positions (:meth:`KVCache.keep_last`).

    Returns:
        ``(Tq, Tk)`` bool.
    """
    tk = tq if tk is None else tk
    if tk < tq:
        raise ValueError(f"sliding_window_mask needs tk >= tq, got tq={tq}, tk={tk}")
    queries = torch.arange(tk - tq, tk, device=device)  # (Tq,)
    return sliding_window_mask_at(queries, torch.arange(tk, device=device), window, sinks)


def sliding_window_mask_at(
    query_positions: Tensor, key_positions: Tensor, window: int, sinks: int = 0
) -> Tensor:
    """:func:`sliding_window_mask` for queries and keys at the given absolute positions
    ``(Tq,)`` and ``(Tk,)`` (a cache that dropped positions, :attr:`KVCache.positions`):
    True where ``k <= q`` and (``q - k < window`` or ``k < sinks``). Returns ``(Tq, Tk)``."""
    if window < 1 or sinks < 0:
        raise ValueError(f"window must be >= 1 and sinks >= 0, got window={window}, sinks={sinks}")
    q, k = query_positions.unsqueeze(-1), key_positions.unsqueeze(-2)  # (Tq, 1), (1, Tk)
    return (k <= q) & ((q - k < window) | (k < sinks))  # (Tq, Tk)


def window_mask(
    tq: int, tk: int, centres: Tensor | None = None, *, half_width: int, device=None
) -> Tensor:
    """Band mask of a local window ``[p_t - D, p_t + D]`` (Luong et al. 2015, §3.2).

    Args:
        tq, tk: query and key lengths.
        centres: ``(..., Tq)`` window centres ``p_t`` (float or int); defaults to ``p_t = t``
            (monotonic alignment, local-m).
        half_width: ``D``; the window holds ``2D + 1`` keys.

    Returns:
        ``(..., Tq, Tk)`` bool (``(Tq, Tk)`` for the default centres).
    """
    if half_width < 0:
        raise ValueError(f"half_width must be >= 0, got {half_width}")
    if centres is None:
        centres = torch.arange(tq, device=device, dtype=torch.float32)
    s = torch.arange(tk, device=centres.device, dtype=centres.dtype)  # (Tk,)
    distance = (s - centres.unsqueeze(-1)).abs()  # (..., Tq, Tk)
    # Round the centre's reach so a fractional p_t keeps exactly the keys within D of it.
    return distance <= half_width + 1e-6


def combine(*masks: Tensor | None) -> Tensor | None:
    """Logical AND of masks with broadcasting; ``None`` entries are ignored.

    Returns ``None`` if every entry is ``None`` (attend everywhere).
    """
    present = [m for m in masks if m is not None]
    if not present:
        return None
    out = present[0]
    for m in present[1:]:
        out = out & m
    return out


def to_blocked(mask: Tensor | None) -> Tensor | None:
    """Convert to the ``nn.MultiheadAttention`` convention (True = blocked)."""
    return None if mask is None else ~mask


def check_mask(mask: Tensor, scores_shape: torch.Size) -> Tensor:
    """Validate a mask against scores ``(B, H, Tq, Tk)``; returns it unchanged.

    Raises ``TypeError`` for a non-bool mask (a float mask is ambiguous: additive or
    multiplicative?) and ``ValueError`` if it does not broadcast.
    """
    if mask.dtype != torch.bool:
        raise TypeError(
            f"attention masks are bool with True = may attend; got dtype {mask.dtype}. "
            "Convert with `mask.bool()` (or `~mask` if yours means 'blocked')."
        )
    try:
        torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError as err:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to scores "
            f"{tuple(scores_shape)} (B, H, Tq, Tk)"
        ) from err
    return mask
