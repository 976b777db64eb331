"""What the Trainer builds before its first update: seeds, threads, optimiser and schedule,
all from the shared :class:`~attnkit.engine.settings.TrainSettings`."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from attnkit.engine import distributed
from attnkit.engine.schedules import build_scheduler
from attnkit.engine.settings import TrainSettings


def seed_everything(seed: int) -> None:
    """Python's, NumPy's global and torch's generators, from one seed."""
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (the global state others may use)
    torch.manual_seed(seed)


def threads_for(t: TrainSettings, d: distributed.Dist) -> int:
    """torch threads for this process: ``train.threads`` (default: ``OMP_NUM_THREADS`` or
    every core), shared among the processes of this machine under torchrun."""
    if t.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed on CUDA
    return distributed.threads_per_process(t.torch_threads) if d.active else t.torch_threads


def build_optimiser(model: torch.nn.Module, t: TrainSettings) -> torch.optim.Optimizer:
    """Adam or AdamW (Kingma & Ba 2015; Loshchilov & Hutter 2019) as configured; with
    ``decay_matrices_only`` the weight decay spares biases and LayerNorm gains (the
    parameters of fewer than two dimensions), as GPT-2's and nanoGPT's trainers do."""
    kind = torch.optim.AdamW if t.optimiser == "adamw" else torch.optim.Adam
    extra = {"fused": True} if t.fused_optimiser else {}
    params: list = list(model.parameters())
    if t.decay_matrices_only:
        params = [
            {"params": [p for p in params if p.dim() >= 2]},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
    return kind(
        params,
        lr=t.learning_rate,
        betas=tuple(t.betas),
        weight_decay=t.weight_decay,
        **extra,
    )


def build_schedule(optimizer, t: TrainSettings, task, total_updates: int):
    """The learning-rate schedule ``train.schedule`` names, over ``total_updates`` updates."""
    warmup = t.warmup_steps
    if t.warmup_fraction is not None:
        warmup = max(1, int(t.warmup_fraction * total_updates))
    return build_scheduler(
        optimizer,
        t.schedule,
        warmup=warmup,
        d_model=task.model_width,
        factor=t.plateau_factor,
        patience=t.plateau_patience,
        total=total_updates,
        floor=t.min_lr_ratio,
    )
