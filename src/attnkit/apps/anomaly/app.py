"""Anomaly detection, declared once: ``attnkit train`` a config with
``task: anomaly-detection`` (one detector fitted per series, a threshold tuned over them:
:mod:`attnkit.apps.anomaly.experiment`), then ``evaluate`` (the NAB score, and point F1,
ROC-AUC and event F1 where the series are labelled) and ``predict`` (the anomalies of a CSV,
each with where its attention went); its own group ``attnkit anomaly detect``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Trained


class AnomalyApp(App):
    name = "anomaly-detection"
    group = "anomaly"
    title = "Anomaly detection"
    moved = ("detect",)
    csv_input = True

    def load_config(self, path, overrides: Sequence[str] = ()):
        from attnkit.apps.anomaly.config import AnomalyConfig
        from attnkit.config import load_yaml

        return load_yaml(AnomalyConfig, path, overrides)

    def task(self, cfg):
        raise TypeError(
            "anomaly detection trains one engine task per series (SeriesTask); use train()"
        )

    def train(self, cfg, run_dir: Path, *, resume=False, progress: bool = False) -> Trained:
        """One detector per series (each an engine run under ``run_dir/series/``), then the
        threshold tuned on the NAB score over them."""
        from attnkit.apps.anomaly.experiment import headline, train_experiment

        metrics = train_experiment(cfg, Path(run_dir), resume=resume, progress=progress)
        return Trained(str(run_dir), headline(metrics), seconds=metrics["seconds"])

    def open(self, run_dir: Path, checkpoint: str = "best"):
        """The run's :class:`~attnkit.apps.anomaly.run.AnomalyRun`: ``run.predict(csv)``."""
        from attnkit.apps.anomaly.run import open_anomaly_run

        self.check_checkpoint(checkpoint)
        return open_anomaly_run(run_dir)

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """The run's detector settings and threshold on ``test`` (solar: new series; NAB and
        CSV have one set of series, so the split changes nothing there)."""
        from attnkit.apps.anomaly.experiment import headline, score_split

        run = self.open(run_dir)
        metrics, n = score_split(run.config, run.threshold, options.split, options.data_dir)
        return Scores(str(run_dir), options.split, headline(metrics), n, "series")

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The anomalies of each CSV, each with the attention mass inside it (a detector is
        fitted on each CSV's first rows with the run's settings)."""
        from attnkit.apps.anomaly.predict import COLUMNS, anomaly_rows, headline

        if not inputs:
            raise ValueError("name the CSV file(s) to score: attnkit predict RUN_DIR FILE.csv")
        run = self.open(run_dir)
        result = Predictions(str(run_dir), list(COLUMNS), [])
        for path in inputs:
            found = run.predict(path)
            result.rows += anomaly_rows(found)
            result.notes.append(headline(found))
        return result

    def commands(self):
        from attnkit.apps.anomaly.cli import commands

        return commands


APP = AnomalyApp()
