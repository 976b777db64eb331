"""A trained image-classification run (``attnkit.load_run``): its config, its Vision
Transformer (Dosovitskiy et al. 2021) in evaluation mode and its class names.

A run directory holds ``config.yaml``, ``model.safetensors`` (the last epoch's weights: there
is no validation split, and the test set never picks a model), ``classes.json`` (the class
names in label order), ``metrics.json`` and, for ``--resume``, ``checkpoints/``::

    run = attnkit.load_run("runs/digits-vit-hybrid")
    pred = run.predict(images)   # (N, C, S, S) -> .classes, .probabilities, .maps (rollout)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnkit.apps import require_kind
from attnkit.apps.vision.config import VisionConfig, load_config
from attnkit.apps.vision.data import ImageSet, load_data, read_image
from attnkit.apps.vision.model import Prediction, ViT
from attnkit.apps.vision.model import deletion_test as vit_deletion_test
from attnkit.apps.vision.training import accuracy
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir
from attnkit.errors import DataError
from attnkit.textfiles import paired_files, read_listed, where

CLASSES = "classes.json"  # the class names in label order, written when training starts


@dataclass
class VisionRun:
    """``run.predict(images)`` gives each image's class and its attention-rollout map (Abnar &
    Zuidema 2020) for :func:`~attnkit.apps.vision.views.plot_rollout` and the notebook
    views; ``run.accuracy(data)`` and ``run.deletion_test(data)`` score it."""

    path: Path
    config: VisionConfig
    model: ViT
    task: str = "image-classification"

    @classmethod
    def load(cls, run_dir: str | Path) -> VisionRun:
        """The run at ``run_dir``; a run of another kind is refused in one line."""
        require_kind(run_dir, "image-classification")
        run = RunDir(run_dir)
        cfg = load_config(run.existing_config())
        model = ViT(cfg.model)
        load_model(model, run.model)
        return cls(Path(run_dir), cfg, model.eval())

    @property
    def classes(self) -> list[str]:
        """The class names in label order (runs trained before ``classes.json`` kept them in
        ``metrics.json``; digits without either are numbered)."""
        file = self.path / CLASSES
        if file.is_file():
            return json.loads(file.read_text(encoding="utf-8"))
        names = RunDir(self.path).read_metrics().get("classes")
        return names or [str(i) for i in range(self.config.model.num_classes)]

    def predict(self, images, residual: float = 0.5) -> Prediction:
        """``images (N, C, S, S)`` -> the model's prediction: ``classes``, ``maps``, ..."""
        return self.model.predict(torch.as_tensor(images, dtype=torch.float32), residual)

    def data(self, split: str, data_dir: str | None = None) -> ImageSet:
        """The run's ``train`` or ``test`` images (a relative ``data.path`` read from
        ``data_dir``)."""
        if split not in ("train", "test"):
            raise ValueError(
                f"split must be 'train' or 'test' for image classification, got {split!r}"
            )
        return load_data(self.config, data_dir)[split]

    def accuracy(self, data: ImageSet) -> float:
        return accuracy(self.model, data)

    def deletion_test(
        self, data: ImageSet, ks=(1, 2, 4, 8), fill: str = "zero", seed: int = 0
    ) -> list[dict]:
        """:func:`attnkit.apps.vision.model.deletion_test` on ``data``."""
        return vit_deletion_test(self.model, data.images, data.labels, ks, fill, seed)

    def classify_files(self, files: list[Path]) -> list[tuple[str, float]]:
        """Each image file's class name and its probability. A run trained on the digits is
        refused: its inputs are scikit-learn's arrays (8 x 8, ink = 1)."""
        self._takes_files("classify")
        if not files:
            raise ValueError("give the image files to classify (PNG or JPEG)")
        m = self.config.model
        images = np.stack([read_image(f, m.image_size, m.channels) for f in files])  # (n, C, S, S)
        pred = self.predict(images)
        names = self.classes
        pairs = zip(pred.classes.tolist(), pred.probabilities, strict=True)
        return [(names[c], float(p[c])) for c, p in pairs]

    def own_files(self, src: Path, ref: Path) -> ImageSet:
        """A user's test set: the images of ``src`` (a folder, sorted by name, or a text file
        listing them one a line, relative to its folder) and their class names, one a line of
        ``ref`` (:func:`attnkit.textfiles.paired_files`). Files that do not pair up, a name
        that is not one of :attr:`classes` and an unreadable image are errors naming the file
        and line."""
        self._takes_files("score")
        files, names = paired_files(src, ref, "class name")
        classes = self.classes
        for number, name in enumerate(names, 1):
            if name not in classes:
                shown = ", ".join(classes[:10]) + (", ..." if len(classes) > 10 else "")
                raise DataError(f"{where(ref, number)}: {name!r} is not a class ({shown})")
        m = self.config.model
        images = read_listed(files, lambda f: read_image(f, m.image_size, m.channels))
        labels = torch.tensor([classes.index(n) for n in names], dtype=torch.long)
        return ImageSet(torch.from_numpy(np.stack(images)), labels, classes)  # (n, C, S, S)

    def _takes_files(self, verb: str) -> None:
        """Refuse image files for a run trained on scikit-learn's digits (its inputs are the
        package's arrays: 8 x 8, ink = 1)."""
        if self.config.data.source == "digits":
            raise ValueError(
                f"this run was trained on scikit-learn's digits (8 x 8, ink = 1); {verb} its "
                "images with the Python API (attnkit.load_run(RUN).predict(images))"
            )
