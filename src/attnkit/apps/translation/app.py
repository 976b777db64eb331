"""Translation, declared once (:class:`~attnkit.application.App`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App


class TranslationApp(App):
    name = "translation"
    group = "translation"
    title = "Translation"
    moved = ("translate", "align", "data", "experiment")
    runs = ("evaluate", "predict", "report", "serve")
    evaluate_options = frozenset({"beam", "checkpoint", "bf16", "output"})
    checkpoints = ("best", "averaged", "last")
    serves_demo = True

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.translation.task import load_config

        return load_config(path, overrides)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        from attnkit.apps.translation.task import open_run

        return open_run(run_dir, checkpoint)

    def commands(self):
        from attnkit.apps.translation.cli import commands

        return commands


APP = TranslationApp()
