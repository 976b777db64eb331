"""Segmentation with U-Net and Attention U-Net behind ``attnkit train`` / ``evaluate`` /
``predict`` (:mod:`attnkit.apps`).

A config (``task: segmentation``; see ``configs/shapes-attention-unet.yaml`` and
:mod:`attnkit.apps.segmentation.config`) has ``data``, ``model``
(:class:`~attnkit.apps.segmentation.model.UNetConfig`) and ``train`` sections; training is the
engine's (:mod:`attnkit.apps.segmentation.training`). A run directory holds ``config.yaml``,
``model.safetensors``, ``metrics.json`` (with the test scores) and ``checkpoints/``::

    attnkit train configs/shapes-attention-unet.yaml -o runs/shapes-att
    attnkit evaluate runs/shapes-att --split test
    attnkit predict runs/shapes-att image.png --output mask.png --picture gates.png
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from attnkit.apps.segmentation.config import SegmentationConfig, load_config
from attnkit.apps.segmentation.model import SegmentationOutput, UNet
from attnkit.apps.segmentation.training import SegmentationTask, predict_set
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import Resume, fit
from attnkit.metrics.segmentation import scores

__all__ = ["evaluate_run_dir", "load_config", "open_run", "predict_run", "train_run"]


def train_run(
    cfg: SegmentationConfig, run_dir: Path | None, *, resume: Resume = False,
    progress: bool = False,
) -> str:  # fmt: skip
    """Train ``cfg`` into ``run_dir`` (default ``runs/NAME``); returns the CLI's line."""
    task = SegmentationTask(cfg)
    out = Path(run_dir) if run_dir is not None else Path("runs") / cfg.name
    return task.summary(fit(task, out, resume=resume, progress=progress))


def train_from_config(config: Path, run_dir: Path | None, *, resume: Resume = False,
                      progress: bool = False, overrides: Sequence[str] = ()) -> str:  # fmt: skip
    """:func:`train_run` of the config file ``config``."""
    return train_run(load_config(config, overrides), run_dir, resume=resume, progress=progress)


@dataclass
class SegmentationRun:
    """``attnkit.load_run`` of a segmentation run: ``run.predict(images)`` gives foreground
    probabilities and each gate's coefficients."""

    path: Path
    config: SegmentationConfig
    model: UNet
    task: str = "segmentation"

    def predict(self, images) -> SegmentationOutput:
        """``images (N, C, H, W)`` in [0, 1] -> probabilities ``(N, 1, H, W)`` and gates."""
        return self.model.predict(torch.as_tensor(np.asarray(images), dtype=torch.float32))


def open_run(path: str | Path, checkpoint: str = "best") -> SegmentationRun:
    if checkpoint != "best":
        raise ValueError(f"a segmentation run keeps its kept model only, not {checkpoint!r}")
    run = RunDir(path)
    cfg = load_config(run.existing_config())
    model = UNet(cfg.model)
    load_model(model, run.model)
    return SegmentationRun(Path(path), cfg, model.eval())


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """Dice, IoU, pixel error and foreground precision / recall / F1 on ``split``; with
    ``train.test_flips`` a second line scores the mean over the 8 flips and quarter turns."""
    from dataclasses import replace

    from attnkit.apps.segmentation.sets import load_sets

    run = open_run(run_dir)
    data = run.config.data
    if data_dir is not None:
        data = replace(data, data_dir=Path(data_dir))
    sets = load_sets(data)
    if split not in sets:
        raise ValueError(f"this run's data has no {split!r} split; it has {', '.join(sets)}")
    lines = []
    for flips in (False, True) if run.config.train.test_flips else (False,):
        probs, _ = predict_set(run.model, sets[split], flips=flips)
        s = asdict(scores(probs > 0.5, sets[split].masks > 0.5))
        shown = ", ".join(f"{k} {v:.4f}" for k, v in s.items() if isinstance(v, float))
        views = ", mean of 8 flips and turns" if flips else ""
        lines.append(f"{run_dir} {split} ({len(sets[split])} images{views}): {shown}")
    return "\n".join(lines)


def predict_run(
    run_dir: Path, inputs: list[Path], *, output: Path | None = None, picture: Path | None = None
) -> str:
    """The mask of each grey PNG in ``inputs`` (``--output``: a PNG for one input, else a
    folder); ``picture``: input, prediction and each gate's map for the first input."""
    from attnkit.apps.segmentation.data import read_image
    from attnkit.apps.segmentation.views import plot_segmentation

    if not inputs:
        raise ValueError("give the image files to segment (grey PNG)")
    run = open_run(run_dir)
    lines = []
    for k, path in enumerate(inputs):
        image = read_image(path)  # (1, H, W) float32 in [0, 1]
        out = run.predict(image[None])
        mask = (out.logits[0, 0].numpy() > 0.5).astype(np.uint8) * 255  # (H, W)
        lines.append(f"{path}\tforeground {float((mask > 0).mean()):.4f}")
        if output is not None:
            _save_mask(mask, output if len(inputs) == 1 else output / f"{Path(path).stem}.png")
        if picture is not None and k == 0:
            gates = [g[0, 0].numpy() for g in out.gates]
            plot_segmentation(image[0], out.logits[0, 0].numpy(), picture, gates=gates,
                              title=f"{Path(path).name}: {run.path}")  # fmt: skip
    return "\n".join(lines)


def _save_mask(mask: np.ndarray, path: Path) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(mask).save(path)
