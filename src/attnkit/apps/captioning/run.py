"""A trained captioning run (``attnkit.load_run``): Show, Attend and Tell (Xu et al. 2015) on
generated scenes, with its config, vocabulary and best model.

A run directory holds ``config.yaml``, ``model.safetensors`` (the best epoch by validation
exact match, then BLEU), ``vocab.json``, ``metrics.json`` (the engine's per-epoch history, the
best epoch's validation scores, and the scores :meth:`CaptioningRun.score` adds per split) and
``checkpoints/`` for ``--resume``::

    run = attnkit.load_run("runs/scenes-soft")
    (caption,) = run.predict(images)   # (N, 3, S, S) -> .words, .alpha (T, L)
    run.score("test")                  # BLEU, exact match, attention correctness
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnkit.apps.captioning.config import CaptioningConfig
from attnkit.apps.captioning.data import scenes_for
from attnkit.apps.captioning.inference import (
    Caption,
    caption_images,
    caption_scenes,
    load_captioner,
    read_image,
)
from attnkit.apps.captioning.model import Captioner
from attnkit.apps.captioning.scenes import Scene, Vocabulary
from attnkit.apps.captioning.views import score_captions, text_scores
from attnkit.engine.rundir import RunDir
from attnkit.textfiles import paired_files, read_listed

SPLITS = ("train", "valid", "test")


@dataclass
class CaptioningRun:
    """``run.predict(images)`` gives each image's caption with its attention map per word
    (``Caption.words``, ``Caption.alpha (T, L)``)."""

    path: Path
    config: CaptioningConfig
    vocab: Vocabulary
    model: Captioner
    task: str = "captioning"

    @classmethod
    def load(cls, run_dir: str | Path) -> CaptioningRun:
        cfg, vocab, model = load_captioner(run_dir)
        return cls(Path(run_dir), cfg, vocab, model)

    def predict(self, images) -> list[Caption]:
        """Greedy captions of ``images (N, 3, S, S)`` with their attention."""
        return caption_images(self.model, self.vocab, images, self.config.train.max_len)

    def caption_files(self, files: list[Path]) -> tuple[list[np.ndarray], list[Caption]]:
        """The pictures of ``files`` (resized to the run's canvas, ``(S, S, 3)`` each) and
        their greedy captions."""
        if not files:
            raise ValueError("give the image files to caption (PNG or JPEG)")
        pictures = [read_image(p, self.config.data.canvas) for p in files]
        return pictures, self.predict(np.stack(pictures).transpose(0, 3, 1, 2))

    def scenes(self, split: str) -> list[Scene]:
        """The generated scenes of ``split`` (train, valid or test)."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; choose train, valid or test")
        return scenes_for(self.config, split)

    def score(self, split: str = "test") -> dict:
        """Greedy captions of ``split`` scored against the scenes' truth (sacreBLEU BLEU-4,
        exact match, attention correctness), recorded under ``split`` in ``metrics.json``."""
        scenes = self.scenes(split)
        captions = caption_scenes(self.model, self.vocab, scenes, self.config.train.max_len)
        scores = score_captions(captions, scenes, self.config.model.grid)
        run = RunDir(self.path)
        run.write_metrics({**run.read_metrics(), split: scores})
        return scores

    def score_files(self, src: str | Path, ref: str | Path) -> dict:
        """Greedy captions of a user's own pictures (``src``: a folder of PNG/JPEG files
        sorted by name, or a text file listing them one a line; each resized to the run's
        canvas) scored against one caption a line of ``ref``: sacreBLEU BLEU-4 and exact match
        (attention correctness needs the objects' boxes, which a caption does not give); not
        recorded in the run. Files that do not pair up, a blank caption and an unreadable
        picture are errors naming the file and line."""
        files, references = paired_files(src, ref, "caption")
        canvas = self.config.data.canvas
        pictures = read_listed(files, lambda path: read_image(path, canvas))  # (S, S, 3) each
        return text_scores(self.predict(np.stack(pictures).transpose(0, 3, 1, 2)), references)
