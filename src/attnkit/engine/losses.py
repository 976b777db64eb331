"""Token-level cross-entropy with label smoothing (Szegedy et al. 2016; Vaswani 2017 §5.4)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor


def token_cross_entropy(
    logits: Tensor, target: Tensor, *, pad_id: int, label_smoothing: float = 0.0
) -> tuple[Tensor, int]:
    """Summed smoothed cross-entropy over non-padding tokens, and the number of those tokens.

    Args:
        logits: ``(B, T, V)``.
        target: ``(B, T)`` gold next tokens; ``pad_id`` positions are ignored.

    Returns:
        ``(loss_sum, n_tokens)``; divide by ``n_tokens`` for the mean per token.
    """
    loss = F.cross_entropy(
        logits.reshape(-1, logits.size(-1)),  # (B * T, V)
        target.reshape(-1),  # (B * T,)
        ignore_index=pad_id,
        label_smoothing=label_smoothing,
        reduction="sum",
    )
    return loss, int((target != pad_id).sum())
