"""Image classification with a Vision Transformer (Dosovitskiy et al. 2021), declared once:
``attnkit train`` a config with ``task: image-classification``, then ``evaluate`` (accuracy on
the train or test images) and ``predict`` (each image file's class and its probability); its
own group ``attnkit vision rollout | deletion | classify-images``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores


class VisionApp(App):
    name = "image-classification"
    group = "vision"
    title = "Image classification (ViT)"
    moved = ("rollout", "deletion", "classify-images")

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.vision.config import load_config

        return load_config(path, overrides)

    def task(self, cfg):
        from attnkit.apps.vision.training import VisionTask

        return VisionTask(cfg)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        """The run's :class:`~attnkit.apps.vision.run.VisionRun` (it keeps its final model
        only, called ``best``): ``run.predict(images)`` gives classes and rollout maps."""
        from attnkit.apps.vision.run import VisionRun

        self.check_checkpoint(checkpoint)
        return VisionRun.load(run_dir)

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """Accuracy on the ``train`` or ``test`` images (there is no validation split)."""
        run = self.open(run_dir)
        data = run.data(options.split, options.data_dir)
        accuracy = run.accuracy(data)
        return Scores(str(run_dir), options.split, {"accuracy": accuracy}, len(data), "images")

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The predicted class and its probability for each image file (a run trained on a
        folder of images)."""
        classified = self.open(run_dir).classify_files(inputs)
        rows = [[str(f), c, p] for f, (c, p) in zip(inputs, classified, strict=True)]
        return Predictions(str(run_dir), ["file", "class", "probability"], rows)

    def commands(self):
        from attnkit.apps.vision.cli import commands

        return commands


APP = VisionApp()
