"""Anomaly detection, declared once (:class:`~attnkit.application.App`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App


class AnomalyApp(App):
    name = "anomaly-detection"
    group = "anomaly"
    title = "Anomaly detection"
    moved = ("detect",)
    csv_input = True

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.anomaly.task import load_config

        return load_config(path, overrides)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        from attnkit.apps.anomaly.task import open_run

        return open_run(run_dir, checkpoint)

    def commands(self):
        from attnkit.apps.anomaly.cli import commands

        return commands


APP = AnomalyApp()
