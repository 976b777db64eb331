"""Image classification (ViT), declared once (:class:`~attnkit.application.App`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App


class VisionApp(App):
    name = "image-classification"
    group = "vision"
    title = "Image classification (ViT)"
    moved = ("rollout", "deletion", "classify-images")

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.vision.task import load_config

        return load_config(path, overrides)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        from attnkit.apps.vision.task import open_run

        return open_run(run_dir, checkpoint)

    def commands(self):
        from attnkit.apps.vision.cli import commands

        return commands


APP = VisionApp()
