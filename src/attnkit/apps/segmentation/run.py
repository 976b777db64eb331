"""A trained segmentation run as a Python object (``attnkit.load_run``): the U-Net of
``model.safetensors`` with its config, which segments images and scores a split of its data.

A run directory holds ``config.yaml``, ``model.safetensors``, ``metrics.json`` (with the test
scores) and ``checkpoints/``::

    run = attnkit.load_run("runs/shapes-att")
    out = run.predict(images)            # (N, 1, H, W) in [0, 1] -> probabilities and gates
    scores = run.score("test")           # {"plain": {...}, "flips": {...}} (train.test_flips)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from attnkit.apps import require_kind
from attnkit.apps.segmentation.challenge import split_scores
from attnkit.apps.segmentation.config import SegmentationConfig, load_config
from attnkit.apps.segmentation.model import SegmentationOutput, UNet
from attnkit.apps.segmentation.sets import ImageMasks, load_sets
from attnkit.apps.segmentation.training import check_fits, predict_set
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir

__all__ = ["SegmentationRun", "save_mask"]


@dataclass
class SegmentationRun:
    """``attnkit.load_run`` of a segmentation run: ``run.predict(images)`` gives foreground
    probabilities and each gate's coefficients."""

    path: Path
    config: SegmentationConfig
    model: UNet
    task: str = "segmentation"

    @classmethod
    def load(cls, path: str | Path) -> SegmentationRun:
        """The run at ``path`` (its kept model: the best epoch's, else the last); a run of
        another kind is refused (:class:`~attnkit.application.WrongRunKind`)."""
        require_kind(path, "segmentation")
        run = RunDir(path)
        cfg = load_config(run.existing_config())
        model = UNet(cfg.model)
        load_model(model, run.model)
        return cls(Path(path), cfg, model.eval())

    def predict(self, images) -> SegmentationOutput:
        """``images (N, C, H, W)`` in [0, 1] -> probabilities ``(N, 1, H, W)`` and gates."""
        return self.model.predict(torch.as_tensor(np.asarray(images), dtype=torch.float32))

    def score(self, split: str = "test", data_dir: str | Path | None = None) -> dict[str, dict]:
        """Dice, IoU, pixel error, foreground precision / recall / F1 (pooled and per-image
        means; for ISBI also the challenge's f1_tol1, f1_tol2, v_rand and v_info:
        :func:`~attnkit.apps.segmentation.challenge.split_scores`) on ``split`` at threshold
        0.5: ``{"plain": ...}``, and with the config's
        ``train.test_flips`` also ``{"flips": ...}``, the mean over the 8 flips and quarter
        turns (:func:`~attnkit.apps.segmentation.augment.dihedral_mean`)."""
        data = self.config.data
        if data_dir is not None:
            data = replace(data, data_dir=Path(data_dir))
        sets = load_sets(data)
        if split not in sets:
            raise ValueError(f"this run's data has no {split!r} split; it has {', '.join(sets)}")
        return self.score_set(sets[split])

    def score_files(self, src: str | Path, ref: str | Path) -> dict[str, dict]:
        """:meth:`score` of a user's own images and masks (:func:`.own.own_set`: ``src`` a
        folder or a list of PNG images, ``ref`` a folder of masks under the images' file names
        or a list of mask files; masks read as ``data.foreground`` says)."""
        from attnkit.apps.segmentation.own import own_set

        found = own_set(src, ref, self.config.data.foreground)
        check_fits(found, self.config, "", where=src)
        return self.score_set(found)

    def score_set(self, data: ImageMasks) -> dict[str, dict]:
        """The scores of :meth:`score` on ``data``."""
        views = (
            {"plain": False, "flips": True} if self.config.train.test_flips else {"plain": False}
        )
        found = {}
        for name, flips in views.items():
            probs, _ = predict_set(self.model, data, flips=flips)
            found[name] = split_scores(probs, data.masks, self.config.data.source)
        return found


def save_mask(probabilities: np.ndarray, path: Path) -> Path:
    """Probabilities ``(H, W)`` as a black-and-white PNG (white: above 0.5) at ``path``."""
    from PIL import Image

    mask = (probabilities > 0.5).astype(np.uint8) * 255  # (H, W)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(mask).save(path)
    return path
