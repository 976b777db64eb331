"""Segmentation (Attention U-Net), declared once (:class:`~attnkit.application.App`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App


class SegmentationApp(App):
    name = "segmentation"
    group = "segmentation"
    title = "Segmentation (Attention U-Net)"
    predict_options = frozenset({"picture"})

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.segmentation.task import load_config

        return load_config(path, overrides)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        from attnkit.apps.segmentation.task import open_run

        return open_run(run_dir, checkpoint)


APP = SegmentationApp()
