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


def warmup_then(step: int, *, warmup: int, total: int, decay: str, floor: float = 0.0) -> float:
    """Linear warm-up over ``warmup`` updates to 1, then ``decay``: ``linear`` to ``floor`` at
    ``total`` (BERT's schedule, floor 0), ``cosine`` to ``floor`` at ``total`` (Loshchilov &
    Hutter 2017, eq. (5), with ``eta_min = floor``: the ViT recipe's 0, nanoGPT's 0.1), or
    ``constant``. ``step`` counts from 0."""
    if step < warmup:
        return (step + 1) / warmup
    if decay == "constant":
        return 1.0
    progress = (step - warmup) / max(total - warmup, 1)
    if decay == "linear":
        return floor + (1.0 - floor) * max(0.0, 1.0 - progress)
    return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def build_scheduler(
    optimizer,
    name: str,
    *,
    warmup: int,
    d_model: int,
    factor: float,
    patience: int,
    total: int = 0,
    floor: float = 0.0,
):
    """A per-step scheduler (``noam``, ``inverse_sqrt``, ``linear``, ``warmup_cosine``,
    ``warmup_constant``), a per-epoch plateau scheduler (``plateau``, stepped with the
    validation loss), or None (``constant``). ``total``: all updates of the run.
    """
    lr_lambda = torch.optim.lr_scheduler.LambdaLR
    if name == "noam":
        # normalise so the peak multiplier is 1: the configured learning rate is the peak
        peak = noam(warmup, d_model=d_model, warmup=warmup)
        return lr_lambda(optimizer, lambda s: noam(s + 1, d_model=d_model, warmup=warmup) / peak)
    if name == "inverse_sqrt":
        return lr_lambda(optimizer, lambda s: inverse_sqrt(s + 1, warmup=warmup))
    if name in PER_STEP_WARMUP:
        decay = PER_STEP_WARMUP[name]
        return lr_lambda(
            optimizer,
            lambda s: warmup_then(s, warmup=warmup, total=total, decay=decay, floor=floor),
        )
    if name == "plateau":
        return torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="min", factor=factor, patience=patience
        )
    if name == "constant":
        return None
    raise ValueError(f"unknown schedule {name!r}")


PER_STEP_WARMUP = {"linear": "linear", "warmup_cosine": "cosine", "warmup_constant": "constant"}
PER_STEP = ("noam", "inverse_sqrt", *PER_STEP_WARMUP)
