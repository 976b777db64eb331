"""How the :class:`~attnkit.engine.trainer.Trainer` continues from a checkpoint: the weights,
optimiser, schedule, data position, the task's state and the fp16 loss scale back in place,
with the given config's training settings applied on top (:mod:`.resume`)."""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from attnkit.engine import resume as resume_settings
from attnkit.engine.checkpoint import load_model, load_trainer
from attnkit.engine.position import DataPosition

log = logging.getLogger("attnkit.engine.trainer")  # the Trainer's log, as before the split


class Restoring:
    """The resuming half of the Trainer (mixed in; uses its attributes)."""

    def _load(self, path: Path) -> None:
        found = resume_settings.changes(self.run, self.t)  # the config's train: vs the run's
        if self.exact:
            resume_settings.refuse(found, str(self.run.config))
        load_model(self.model, path / "model.safetensors")
        new_schedule = any(c.field == "schedule" for c in found)  # the saved state is another's
        scheduler = None if new_schedule else self.scheduler
        state = load_trainer(path, optimizer=self.optimizer, scheduler=scheduler, rank=self.d.rank)
        extra = state["extra"]
        self.step = state["step"]
        resume_settings.apply(self.optimizer, self.scheduler, self.t, self.step, found)
        if found and self.d.is_main:
            resume_settings.report(found, str(self.run.root))
            self.run.save_config(self.cfg)
        self.history = extra.get("history", self.run.read_metrics().get("history", []))
        saved = extra.get("position") or {}
        self.position = DataPosition.from_dict(saved, state["epoch"] + 1)
        if "task" in extra:
            self.task.load_state_dict(extra["task"])
        if self.scaler is not None and extra.get("scaler"):
            self.scaler.load_state_dict(extra["scaler"])
        if extra.get("world", 1) != self.d.world:
            log.warning(
                "%s was written by %d process(es), resumed by %d: the same data order, but "
                "dropout draws differ from an uninterrupted run",
                path,
                extra.get("world", 1),
                self.d.world,
            )
            if self.d.active:
                torch.manual_seed(self.t.seed + self.d.rank + self.step)
        p = self.position
        log.info("resuming %s at epoch %d, batch %d (update %d)", path, p.epoch, p.batch, self.step)
