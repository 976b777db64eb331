"""Image classification with a Vision Transformer (Dosovitskiy et al. 2021) behind
``attnkit train`` / ``evaluate`` / ``predict`` (:mod:`attnkit.apps`), plus the deletion test.

A config (``task: image-classification``; see ``configs/digits-vit.yaml`` and
:mod:`attnkit.apps.vision.config`) has ``data``, ``model``
(:class:`~attnkit.apps.vision.model.ViTConfig`) and ``train`` sections. Training is the
engine's (:mod:`attnkit.apps.vision.training`). A run directory holds ``config.yaml``,
``model.safetensors`` (the weights after the last epoch: there is no validation split, and the
test set never picks a model), ``metrics.json`` and, for ``--resume``, ``checkpoints/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnkit.apps.vision.config import ImageTaskConfig, VisionConfig, load_config
from attnkit.apps.vision.data import ImageSet, load_data, read_image
from attnkit.apps.vision.model import ViT
from attnkit.apps.vision.model import deletion_test as vit_deletion_test
from attnkit.apps.vision.training import VisionTask, accuracy, train_vit
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import Resume, fit

__all__ = [
    "ImageTaskConfig", "VisionConfig", "accuracy", "deletion_test", "evaluate_run_dir",
    "load_config", "load_data", "load_vit_run", "predict_run", "train_from_config", "train_run",
    "train_vit",
]  # fmt: skip


def load_vit_run(run_dir: str | Path) -> tuple[VisionConfig, ViT]:
    """The config and the trained model (evaluation mode) of a run directory."""
    run = RunDir(run_dir)
    cfg = load_config(run.existing_config())
    model = ViT(cfg.model)
    load_model(model, run.model)
    return cfg, model.eval()


def deletion_test(
    model: ViT, data: ImageSet, ks=(1, 2, 4, 8), fill: str = "zero", seed: int = 0
) -> list[dict]:
    """:func:`attnkit.apps.vision.model.deletion_test` on ``data``."""
    return vit_deletion_test(model, data.images, data.labels, ks, fill, seed)


def train_run(
    cfg: VisionConfig, run_dir: Path | None, *, resume: Resume = False, progress: bool = False
) -> str:
    """Train the ViT of ``cfg`` into ``run_dir`` (default ``runs/NAME``); ``resume``: see
    :class:`~attnkit.engine.trainer.Trainer`. Returns the line the CLI prints (test and
    train accuracy, training time)."""
    out = Path(run_dir) if run_dir is not None else Path("runs") / cfg.name
    task = VisionTask(cfg)
    return task.summary(fit(task, out, resume=resume, progress=progress))


def train_from_config(
    config: Path,
    run_dir: Path | None,
    *,
    resume: Resume = False,
    progress: bool = False,
    overrides: Sequence[str] = (),
) -> str:
    """:func:`train_run` of the config file ``config`` (``--set`` ``overrides`` applied)."""
    return train_run(load_config(config, overrides), run_dir, resume=resume, progress=progress)


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """Accuracy of a trained run on ``split`` (``train`` or ``test``)."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test' for image classification, got {split!r}")
    cfg, model = load_vit_run(run_dir)
    data = load_data(cfg, data_dir)[split]
    return f"{run_dir} {split}: accuracy {accuracy(model, data):.4f} ({len(data)} images)"


def predict_run(run_dir: Path, inputs: list[Path], *, output: Path | None = None) -> str:
    """The predicted class and its probability for each image file, one tab-separated line
    per file (``attnkit predict`` / ``attnkit classify-images``); ``output``: also written
    there. A run trained on the digits is refused: its inputs are scikit-learn's arrays."""
    cfg, model = load_vit_run(run_dir)
    if cfg.data.source == "digits":
        raise ValueError(
            "this run was trained on scikit-learn's digits (8 x 8, ink = 1); classify its "
            "images with the Python API (ViT.predict)"
        )
    if not inputs:
        raise ValueError("give the image files to classify (PNG or JPEG)")
    m = cfg.model
    names = RunDir(run_dir).read_metrics().get("classes") or [str(i) for i in range(m.num_classes)]
    images = np.stack([read_image(f, m.image_size, m.channels) for f in inputs])  # (n, C, S, S)
    pred = model.predict(torch.from_numpy(images))
    lines = [
        f"{f}\t{names[c]}\t{float(p[c]):.4f}"
        for f, c, p in zip(inputs, pred.classes.tolist(), pred.probabilities, strict=True)
    ]
    text = "\n".join(lines)
    if output is not None:
        output.write_text(text + "\n", encoding="utf-8")
    return text


@dataclass
class VisionRun:
    """``attnkit.load_run`` of a ViT run: ``run.predict(images)`` gives each image's class and
    its attention-rollout map (Abnar & Zuidema 2020) for :func:`~attnkit.apps.vision.views.
    plot_rollout` and the notebook views."""

    path: Path
    config: VisionConfig
    model: ViT
    task: str = "image-classification"

    def predict(self, images, residual: float = 0.5):
        """``images (N, C, S, S)`` -> the model's prediction: ``classes``, ``maps``, ..."""
        return self.model.predict(torch.as_tensor(images, dtype=torch.float32), residual)


def open_run(path: str | Path, checkpoint: str = "best") -> VisionRun:
    if checkpoint != "best":
        raise ValueError(f"a vision run keeps its final model only, not {checkpoint!r}")
    cfg, model = load_vit_run(path)
    return VisionRun(Path(path), cfg, model)
