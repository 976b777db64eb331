"""Segmentation as an engine task: shuffled, flipped batches and BCE + soft Dice per image.

The engine's :class:`~attnkit.engine.trainer.Trainer` runs the loop (Adam, checkpoints, exact
resume); :class:`SegmentationTask` says only how to build the U-Net, batch the images, score a
batch and validate. Generated shapes have a validation split (the best epoch by validation Dice
is kept); ISBI and folders without one keep the last epoch. :meth:`SegmentationTask.finish`
measures the test scores (Dice, IoU, pixel error, foreground precision, recall and F1; for ISBI
also the 2012 challenge's, :mod:`~attnkit.apps.segmentation.challenge`) that the engine adds to
``metrics.json``::

    from attnkit.apps.segmentation.config import load_config
    from attnkit.apps.segmentation.training import SegmentationTask
    from attnkit.engine.trainer import fit
    result = fit(SegmentationTask(load_config("configs/shapes-attention-unet.yaml")),
                 "runs/shapes-attention")          # result.final["test"]["dice"]
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attnkit.apps.segmentation.augment import dihedral_mean, elastic
from attnkit.apps.segmentation.border_weights import weight_maps
from attnkit.apps.segmentation.challenge import split_scores
from attnkit.apps.segmentation.config import SegmentationConfig
from attnkit.apps.segmentation.model import UNet
from attnkit.apps.segmentation.sets import ImageMasks, load_sets
from attnkit.engine.results import TrainResult
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task
from attnkit.errors import DataError
from attnkit.metrics.segmentation import scores

log = logging.getLogger(__name__)


@dataclass
class Batch:
    """Rows ``index (b,)`` of the training set, turned ``turns`` quarter turns and flipped."""

    index: Tensor
    turns: int = 0
    flip: bool = False
    seed: int = 0  # the elastic deformation's field (train.elastic)
    at: tuple[float, float] = (0.0, 0.0)  # the crop's top-left corner, as fractions of its range

    def apply(self, x: Tensor) -> Tensor:
        """The same flip and turn for images and masks ``(b, C, H, W)``."""
        x = torch.rot90(x, self.turns, dims=(-2, -1)) if self.turns else x
        return x.flip(-1) if self.flip else x

    def crop(self, x: Tensor, side: int) -> Tensor:
        """The ``side x side`` tile of ``x (b, C, H, W)`` at :attr:`at` (the same for images
        and masks), ``(b, C, side, side)``; ``side`` 0 gives ``x``."""
        if not side:
            return x
        h, w = x.shape[-2:]
        if side > min(h, w):
            raise ValueError(f"train.crop {side} is larger than a {h} x {w} training image")
        top, left = int(self.at[0] * (h - side + 1)), int(self.at[1] * (w - side + 1))
        return x[..., top : top + side, left : left + side]


def dice_loss(logits: Tensor, masks: Tensor) -> Tensor:
    """``1 - soft Dice`` per image ``(b,)`` (Milletari et al. 2016, eq. 1, with p = sigmoid)."""
    p = torch.sigmoid(logits).flatten(1)  # (b, H*W)
    t = masks.flatten(1)  # (b, H*W)
    return 1 - (2 * (p * t).sum(1) + 1) / (p.sum(1) + t.sum(1) + 1)


def image_losses(
    logits: Tensor, masks: Tensor, dice_weight: float, weights: Tensor | None = None
) -> Tensor:
    """BCE averaged over each image's pixels plus ``dice_weight`` times its Dice loss, ``(b,)``;
    ``weights (b, 1, H, W)``: each pixel's BCE multiplied by its weight first, the mean of
    ``w(x) · BCE(x)`` (Ronneberger et al. 2015, eq. (2), :mod:`.border_weights`)."""
    bce = F.binary_cross_entropy_with_logits(logits, masks, reduction="none")  # (b, 1, H, W)
    if weights is not None:
        bce = bce * weights
    return bce.flatten(1).mean(1) + dice_weight * dice_loss(logits, masks)


class SegmentationTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a segmentation run. ``sets``: the loaded
    ``{"train", "valid", "test"}`` sets (the benchmark passes them), else read in
    :meth:`prepare`."""

    monitor = "valid_dice"
    mode = "max"

    def __init__(self, cfg: SegmentationConfig, sets: dict[str, ImageMasks] | None = None):
        self.config = cfg
        self.sets = sets
        self.weights: Tensor | None = None  # train.border_weight: (N, 1, H, W) per train image

    def prepare(self, run: RunDir, *, resume: bool) -> None:
        if self.sets is None:
            self.sets = load_sets(self.config.data)
        for split, found in self.sets.items():
            check_fits(found, self.config, split)
        sizes = {k: len(v) for k, v in self.sets.items()}
        log.info("images: %s", ", ".join(f"{k} {n}" for k, n in sizes.items()))
        self.border_maps()

    def border_maps(self) -> Tensor | None:
        """The loss-weight maps of the training masks ``(N, 1, H, W)`` at the training
        resolution (:func:`~.border_weights.weight_maps`), computed once; ``None`` with
        ``train.border_weight`` 0."""
        t = self.config.train
        if t.border_weight <= 0:
            return None
        if self.weights is None or len(self.weights) != len(self.sets["train"]):
            masks = self.sets["train"].masks  # (N, 1, H, W)
            self.weights = weight_maps(masks, t.border_weight, t.border_sigma, t.border_cells)
            log.info("border weights: mean %.3f, max %.3f", self.weights.mean(), self.weights.max())
        return self.weights

    def build_model(self) -> UNet:
        model = UNet(self.config.model)
        return model.to(memory_format=torch.channels_last) if self.channels_last else model

    @property
    def channels_last(self) -> bool:
        return self.config.train.channels_last

    def epoch_batches(self, epoch: int) -> list[Batch]:
        """A shuffled order cut into batches, each with its flip and turn: a pure function of
        ``(seed, epoch)``, so a resumed run sees the same batches."""
        t = self.config.train
        g = torch.Generator().manual_seed(t.seed * 100_003 + epoch)
        order = torch.randperm(len(self.sets["train"]), generator=g)  # (N,)
        batches = []
        for start in range(0, len(order), t.batch_size):
            turns, flip = torch.randint(0, 4, (2,), generator=g).tolist()
            # drawn only with elastic deformation, so runs without it see the batches they saw
            seed = int(torch.randint(0, 2**31 - 1, (1,), generator=g)) if t.elastic > 0 else 0
            augment = dict(turns=turns, flip=flip % 2 == 1) if t.flips else {}
            if t.crop:  # drawn only with crops, for the same reason
                augment["at"] = tuple(torch.rand(2, generator=g).tolist())
            batches.append(Batch(order[start : start + t.batch_size], **augment, seed=seed))
        return batches

    def units(self, batch: Batch) -> int:
        return batch.index.numel()

    def collate(self, batch: Batch) -> tuple[Tensor, ...]:
        """The batch's images and masks, flipped, turned, warped and cropped as drawn (on
        the CPU; in DataLoader workers with ``train.workers`` > 0); with
        ``train.border_weight`` also the weight maps ``(b, 1, h, w)``, moved the same way
        (warped bilinearly, as one more image channel: the same field)."""
        t, train = self.config.train, self.sets["train"]
        images = batch.apply(train.images[batch.index])  # (b, C, H, W)
        masks = batch.apply(train.masks[batch.index])  # (b, 1, H, W)
        maps = self.border_maps()
        if maps is not None:
            images = torch.cat([images, batch.apply(maps[batch.index])], 1)  # (b, C + 1, H, W)
        if t.elastic > 0:
            images, masks = elastic(images, masks, t.elastic, t.elastic_grid, batch.seed)
        out = (batch.crop(images, t.crop), batch.crop(masks, t.crop))  # after warping
        if maps is None:
            return out
        return out[0][:, :-1], out[1], out[0][:, -1:]  # (b, C, h, w), masks, (b, 1, h, w)

    def loss(self, model, batch: Batch | tuple[torch.Tensor, torch.Tensor]) -> Loss:
        t = self.config.train
        images, masks, *weights = self.collate(batch) if isinstance(batch, Batch) else batch
        device = next(model.parameters()).device
        images = images.to(device, non_blocking=True)  # (b, 1, H', W')
        masks = masks.to(device, non_blocking=True)
        w = weights[0].to(device, non_blocking=True) if weights else None  # (b, 1, H', W')
        if self.channels_last:  # the layout of the model's weights (build_model)
            images = images.contiguous(memory_format=torch.channels_last)  # (b, 1, H, W), NHWC
        out = model(images)
        total = image_losses(out.logits.float(), masks, t.dice_weight, w).sum()
        for aux in out.aux:  # deep supervision
            total = total + t.aux_weight * image_losses(aux.float(), masks, t.dice_weight, w).sum()
        return Loss(total, images.size(0))

    def validate(self, model) -> dict:
        """Loss and Dice on the validation split, or nothing without one."""
        valid = self.sets.get("valid")
        if valid is None or len(valid) == 0:
            return {}
        probs, losses = predict_set(model, valid, self.config.train.dice_weight)
        return {"valid_loss": losses, "valid_dice": scores(probs > 0.5, valid.masks > 0.5).dice}

    def finish(self, run: RunDir, model, result: TrainResult) -> dict:
        """Test scores of the kept model (the engine has loaded the best epoch's weights,
        else the last), and with ``train.test_flips`` those of the mean over the 8 views."""
        test = self.sets.get("test")
        if test is None or not len(test):
            return {}
        t = self.config.train
        probs, _ = predict_set(model, test, t.dice_weight)
        final = {"test": split_scores(probs, test.masks, self.config.data.source)}
        if t.test_flips:  # test-time augmentation, beside the plain scores
            probs, _ = predict_set(model, test, t.dice_weight, flips=True)
            final["test_flips"] = split_scores(probs, test.masks, self.config.data.source)
        return final


@torch.no_grad()
def predict_set(
    model, data: ImageMasks, dice_weight: float = 1.0, batch: int = 16, *, flips: bool = False
):
    """Foreground probabilities ``(N, 1, H, W)`` of ``data`` and the mean loss per image;
    ``flips``: each probability the mean over the 8 flips and quarter turns
    (:func:`~attnkit.apps.segmentation.augment.dihedral_mean`), the loss that mean's."""
    model.eval()
    device = next(model.parameters()).device

    def probabilities(images: Tensor) -> Tensor:  # (b, C, H, W) -> (b, 1, H, W)
        return torch.sigmoid(model(images).logits.float())

    probs, total = [], 0.0
    for start in range(0, len(data), batch):
        images = data.images[start : start + batch].to(device)  # (b, 1, H, W)
        masks = data.masks[start : start + batch].to(device)
        if flips:  # the mean's logit: a mean of probabilities has no logits of its own
            p = dihedral_mean(probabilities, images)
            logits = torch.logit(p, eps=1e-6)
        else:
            logits = model(images).logits.float()
            p = torch.sigmoid(logits)
        total += float(image_losses(logits, masks, dice_weight).sum())
        probs.append(p.cpu())
    model.train()
    return torch.cat(probs), total / max(len(data), 1)


def check_fits(found, cfg, split: str, where: object = None) -> None:
    """The images of ``split`` fit the model: its ``in_channels``, and sides the U-Net can
    halve ``len(channels) - 1`` times; else a :class:`DataError` naming the folder (or
    source, or ``where`` they were read from) and the first image, before a model is built."""
    _, c, h, w = found.images.shape  # (N, C, H, W)
    data, model = cfg.data, cfg.model
    where = where or {"train": data.train_images, "test": data.test_images}.get(split)
    where = where or data.source
    first = found.names[0] if found.names else "?"
    if c != model.in_channels:
        raise DataError(
            f"{where} ({first}): images have {c} channel(s), model.in_channels is "
            f"{model.in_channels} (images are read as grey: set in_channels: {c})"
        )
    if h % model.factor or w % model.factor:
        raise DataError(
            f"{where} ({first}): images are {w}x{h} (width x height); both sides must be "
            f"multiples of {model.factor} for {len(model.channels)} levels of model.channels "
            "(resize or crop the images, or use fewer levels)"
        )
