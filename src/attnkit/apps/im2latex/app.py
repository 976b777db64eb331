"""Image to LaTeX, declared once (:class:`~attnkit.application.App`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App


class Im2latexApp(App):
    name = "im2latex"
    group = "im2latex"
    title = "Image to LaTeX"
    runs = ("evaluate", "predict", "report")
    predict_options = frozenset({"picture"})

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.im2latex.task import load_config

        return load_config(path, overrides)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        from attnkit.apps.im2latex.task import open_run

        return open_run(run_dir, checkpoint)


APP = Im2latexApp()
