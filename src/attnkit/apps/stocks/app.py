"""Stocks (alpha_t-RIM), declared once (:class:`~attnkit.application.App`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App


class StocksApp(App):
    name = "stocks"
    group = "stocks"
    title = "Stocks (alpha_t-RIM)"
    runs = ("evaluate", "predict", "report")
    predict_options = frozenset({"picture"})
    csv_input = True

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.stocks.task import load_config

        return load_config(path, overrides)

    def open(self, run_dir: Path, checkpoint: str = "best"):
        from attnkit.apps.stocks.task import open_run

        return open_run(run_dir, checkpoint)


APP = StocksApp()
