"""Learning-rate schedules as multipliers of the base rate, for ``torch.optim.lr_scheduler``."""

from __future__ import annotations

import math

import torch


def noam(step: int, *, d_model: int, warmup: int) -> float:
    """``d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)`` (Vaswani et al. 2017, eq. (3)).

    Used as a multiplier of a base learning rate of 1 (or a scale factor).
    """
    step = max(step, 1)
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def inverse_sqrt(step: int, *, warmup: int) -> float:
    """Linear warm-up to 1, then ``sqrt(warmup / step)`` (fairseq's inverse square root)."""
    step = max(step, 1)
    return step / warmup if step < warmup else math.sqrt(warmup / step)


def build_scheduler(
    optimizer, name: str, *, warmup: int, d_model: int, factor: float, patience: int
):
    """A per-step scheduler (``noam``, ``inverse_sqrt``), a per-epoch plateau scheduler
    (``plateau``, stepped with the validation loss), or None (``constant``).
    """
    lr_lambda = torch.optim.lr_scheduler.LambdaLR
    if name == "noam":
        # normalise so the peak multiplier is 1: the configured learning rate is the peak
        peak = noam(warmup, d_model=d_model, warmup=warmup)
        return lr_lambda(optimizer, lambda s: noam(s + 1, d_model=d_model, warmup=warmup) / peak)
    if name == "inverse_sqrt":
        return lr_lambda(optimizer, lambda s: inverse_sqrt(s + 1, warmup=warmup))
    if name == "plateau":
        return torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="min", factor=factor, patience=patience
        )
    if name == "constant":
        return None
    raise ValueError(f"unknown schedule {name!r}")
