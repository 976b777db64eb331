"""Resuming with the settings of the config given, not of the checkpoint.

A checkpoint holds the optimiser's settings at the time it was written (its learning rate,
betas, weight decay) and the schedule's position. When a run is resumed with a config whose
``train:`` section differs from the one the run was started with (the NaN stop's advice is
exactly that: lower the learning rate, then ``--resume``), the config wins: each difference is
logged in one line, the optimiser and the schedule are brought to the new settings at the
update reached, and the run's ``config.yaml`` is rewritten. ``--resume-exact`` refuses any
difference instead.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import torch

from attnkit.config import ConfigError, read_yaml, to_dict
from attnkit.engine.rundir import RunDir
from attnkit.precision import FROM_BF16

log = logging.getLogger(__name__)


@dataclass
class Change:
    """One training setting that differs between the run's saved config and the given one."""

    field: str
    saved: Any
    given: Any

    def __str__(self) -> str:
        return f"train.{self.field} {self.saved} -> {self.given} from the config"


def changes(run: RunDir, given_train: Any) -> list[Change]:
    """The ``train:`` settings of ``given_train`` (a dataclass) that differ from the run's saved
    ``config.yaml``; none when the run has no saved config or no ``train:`` section."""
    if not run.config.exists():
        return []
    try:
        saved = (read_yaml(run.config)[0] or {}).get("train")
    except ConfigError:
        return []
    if not isinstance(saved, dict):
        return []
    saved = dict(saved)
    if saved.get("bf16") is not None:  # the older name of precision, as an older run saved it
        saved.setdefault("precision", FROM_BF16.get(saved["bf16"], saved["bf16"]))
    saved.pop("bf16", None)
    given = to_dict(given_train)
    return [
        Change(name, saved.get(name), value)
        for name, value in given.items()
        if name in saved and saved[name] != value
    ]


def refuse(found: list[Change], where: str) -> None:
    """``--resume-exact``: any difference is an error naming every one."""
    if found:
        listed = "; ".join(str(c) for c in found)
        raise ConfigError(
            f"{where}: --resume-exact, but the config differs from the run's: {listed}. "
            "Resume with --resume to take the config's settings, or restore them"
        )


def apply(optimizer, scheduler, settings, step: int, found: list[Change]) -> None:
    """Bring the optimiser and the schedule to ``settings`` at update ``step``.

    The learning rate, betas and weight decay go into every parameter group; a per-step
    schedule (``LambdaLR``) is re-based on the new learning rate and re-evaluated at ``step``
    with its new warm-up and length; a plateau or constant schedule restarts from the new
    learning rate when it changed.
    """
    names = {c.field for c in found}
    for group in optimizer.param_groups:
        if "betas" in names:
            group["betas"] = tuple(settings.betas)
        if "weight_decay" in names:
            group["weight_decay"] = settings.weight_decay
        if "learning_rate" in names or "schedule" in names:
            group["initial_lr"] = settings.learning_rate
    if isinstance(scheduler, torch.optim.lr_scheduler.LambdaLR):
        if names & {"learning_rate", "schedule"}:
            scheduler.base_lrs = [settings.learning_rate] * len(optimizer.param_groups)
        if "schedule" in names:
            scheduler.last_epoch = step
        for group, base, factor in zip(
            optimizer.param_groups, scheduler.base_lrs, scheduler.lr_lambdas, strict=True
        ):
            group["lr"] = base * factor(scheduler.last_epoch)  # the new schedule at this step
        scheduler._last_lr = [g["lr"] for g in optimizer.param_groups]
    elif names & {"learning_rate", "schedule"}:
        for group in optimizer.param_groups:
            group["lr"] = settings.learning_rate
    lrs = [g["lr"] for g in optimizer.param_groups]
    if not all(math.isfinite(lr) for lr in lrs):
        raise ValueError(f"the resumed learning rate is not finite: {lrs}")


def report(found: list[Change], where: str) -> None:
    """Log each difference in one line, then say that the config's settings are in force."""
    for change in found:
        log.info("resuming %s: %s", where, change)
    if found:
        log.info("resuming %s with the config's training settings (config.yaml rewritten)", where)
