"""Image classification as an engine task: shuffled, augmented batches and label-smoothed
cross-entropy for a Vision Transformer (Dosovitskiy et al. 2021); the engine's
:class:`~attnkit.engine.trainer.Trainer` runs the loop (fused AdamW, warm-up and cosine decay,
checkpoints, exact resume).

There is no validation split: the test set never picks a model, so :meth:`VisionTask.validate`
measures nothing, every epoch counts as the best and ``model.safetensors`` holds the last
epoch's weights. :meth:`VisionTask.finish` then measures the train and test accuracy and the
training time, which the engine adds to ``metrics.json``::

    run = attnkit.train("configs/digits-vit-hybrid.yaml", "runs/digits-vit-hybrid")
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attnkit.apps.vision.augment import Augmentation
from attnkit.apps.vision.config import ImageTrainConfig, VisionConfig
from attnkit.apps.vision.data import ImageSet, load_data
from attnkit.apps.vision.model import ViT
from attnkit.apps.vision.model import accuracy as vit_accuracy
from attnkit.engine.checkpoint import write_text
from attnkit.engine.results import TrainResult
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task

log = logging.getLogger(__name__)


@dataclass
class Batch:
    """Rows ``index (b,)`` of the training set and the augmentation drawn for them."""

    index: Tensor
    augment: Augmentation


def epoch_batches(size: int, t: ImageTrainConfig, epoch: int) -> list[Batch]:
    """Epoch ``epoch`` (from 1) of ``size`` training images: a shuffled order cut into
    batches, with each batch's augmentation drawn after its rows, all from one generator
    seeded by ``(t.seed, epoch)`` (the order and seeds of the loop before the engine)."""
    g = torch.Generator().manual_seed(t.seed * 100_003 + epoch - 1)
    order = torch.randperm(size, generator=g)  # (size,)
    batches = []
    for start in range(0, size, t.batch_size):
        index = order[start : start + t.batch_size]  # (b,)
        draws = Augmentation.draw(index.numel(), t.max_shift, t.max_rotation, t.max_scale, g)
        batches.append(Batch(index, draws))
    return batches


def accuracy(model: ViT, data: ImageSet) -> float:
    """Share of ``data`` classified correctly (evaluation mode, on the model's device)."""
    device = next(model.parameters()).device
    return vit_accuracy(model, data.images.to(device), data.labels.to(device))


class VisionTask(Task):
    """The :class:`~attnkit.engine.task.Task` of an image-classification run.

    ``data``: the ``{"train", "test"}`` sets when already loaded (the benchmark loads them
    once for all seeds); otherwise :meth:`prepare` reads them from the config. There is no
    validation split: the default monitor (``valid_loss``) is never measured, so the engine
    keeps the last epoch.
    """

    def __init__(self, cfg: VisionConfig, data: dict[str, ImageSet] | None = None) -> None:
        self.config = cfg
        self.data = data
        self.model_width = cfg.model.d_model
        self.cpu_seconds = 0.0  # CPU time of this process in the epochs so far (all threads)
        self._epoch_began: float | None = None

    def prepare(self, run: RunDir | None, *, resume: bool) -> None:
        """Read the images; write the class names (``classes.json``) into the run."""
        if self.data is None:
            self.data = load_data(self.config)
        train, test = self.data["train"], self.data["test"]
        log.info(
            "%d training images, %d test images, classes %s", len(train), len(test), train.names
        )
        if run is not None:
            write_text(run.root / "classes.json", json.dumps(train.names))

    def build_model(self) -> ViT:
        return ViT(self.config.model)

    def epoch_batches(self, epoch: int) -> list[Batch]:
        """The batches of ``epoch`` (a pure function of the seed and the epoch); the call also
        starts the epoch's CPU clock, stopped by :meth:`validate`."""
        self._epoch_began = time.process_time()
        return epoch_batches(len(self.data["train"]), self.config.train, epoch)

    def units(self, batch: Batch) -> int:
        return batch.index.numel()

    def loss(self, model: torch.nn.Module, batch: Batch) -> Loss:
        """Cross-entropy summed over the batch's images, label-smoothed as configured."""
        train, device = self.data["train"], next(model.parameters()).device
        images = batch.augment.apply(train.images[batch.index]).to(device)  # (b, C, S, S)
        logits = model(images).logits  # (b, classes)
        total = F.cross_entropy(
            logits.float(),
            train.labels[batch.index].to(device),
            label_smoothing=self.config.train.label_smoothing,
            reduction="sum",
        )
        return Loss(total, batch.index.numel())

    def validate(self, model: torch.nn.Module) -> dict:
        """Nothing: there is no validation split (the last epoch's model is kept and patience
        never fires). Stops the epoch's CPU clock."""
        self.cpu_seconds = self._cpu_now()
        self._epoch_began = None
        return {}

    def _cpu_now(self) -> float:
        running = 0.0 if self._epoch_began is None else time.process_time() - self._epoch_began
        return self.cpu_seconds + running

    def state_dict(self) -> dict:
        return {"cpu_seconds": self._cpu_now()}

    def load_state_dict(self, state: dict) -> None:
        self.cpu_seconds = float(state.get("cpu_seconds", 0.0))

    def finish(self, run: RunDir | None, model: ViT, result: TrainResult) -> dict:
        """Test and train accuracy of the final model (the one the engine kept) and the
        training time; the engine adds them to ``metrics.json`` and ``result.final``."""
        return {
            "test_accuracy": accuracy(model, self.data["test"]),
            "train_accuracy": accuracy(model, self.data["train"]),
            "train_seconds": result.seconds,  # wall time of the epochs (loading, scoring not)
            "train_cpu_seconds": self.cpu_seconds,  # CPU time of this process in the epochs
        }
