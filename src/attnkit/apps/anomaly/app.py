"""Anomaly detection, declared once: ``attnkit train`` a config with
``task: anomaly-detection`` (one detector fitted per series, a threshold tuned over them:
:mod:`attnkit.apps.anomaly.experiment`), then ``evaluate`` (the NAB score, and point F1,
ROC-AUC and event F1 where the series are labelled) and ``predict`` (the anomalies of a CSV,
each with where its attention went); its own group ``attnkit anomaly detect``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown, Trained


class AnomalyApp(App):
    name = "anomaly-detection"
    group = "anomaly"
    title = "Anomaly detection"
    run_loader = "attnkit.apps.anomaly.run:open_anomaly_run"
    device_field = "detector.device"
    command_group = "attnkit.apps.anomaly.cli:commands"
    moved = ("detect",)
    evaluate_options = frozenset({"src"})  # a CSV of one series (labels: a label column)
    csv_input = True
    serve_input = "csv"

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

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """The run's detector settings and threshold on ``test`` (solar: new series; NAB and
        CSV have one set of series, so the split changes nothing there), or on one's own CSV
        (``options.src``: :mod:`~attnkit.apps.anomaly.own`)."""
        from attnkit.apps.anomaly.experiment import headline, score_split

        run = self.open(run_dir, device=options.device)
        if options.src is not None:
            from attnkit.apps.anomaly.own import evaluate_csv

            return evaluate_csv(run, options.src)
        metrics, n = score_split(run.config, run.threshold, options.split, options.data_dir)
        return Scores(str(run_dir), options.split, headline(metrics), n, "series")

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The anomalies of each CSV, each with the attention mass inside it (a detector is
        fitted on each CSV's first rows with the run's settings)."""
        from attnkit.apps.anomaly.predict import COLUMNS, anomaly_rows, headline

        if not inputs:
            raise ValueError("name the CSV file(s) to score: attnkit predict RUN_DIR FILE.csv")
        run = self.open(run_dir, device=options.device)
        result = Predictions(str(run_dir), list(COLUMNS), [])
        for path in inputs:
            found = run.predict(path)
            result.rows += anomaly_rows(found)
            result.notes.append(headline(found))
        return result

    def show(self, run, inputs: list[Path]) -> list[Shown]:
        """Each CSV scored (a detector fitted on its first rows), its most anomalous flagged
        row drawn with that row's attention over the series."""
        shown = []
        for path in inputs:
            d = run.predict(path)
            shown.append(explained(str(path), d.series, d.fitted, d.result, d.threshold))
        return shown

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The first ``n`` training series scored by their saved detectors (rows after each
        detector's training rows are scored causally, as new data)."""
        from attnkit.apps.anomaly.detector import detect, load_detector
        from attnkit.apps.anomaly.experiment import load_series

        run = self.open(run_dir)
        shown = []
        for series in load_series(run.config, "train")[:n]:
            folder = Path(run_dir) / "series" / series.name.replace("/", "__")
            if not (folder / "detector.json").is_file():
                continue
            fitted = load_detector(folder)
            result = detect(fitted, series.values, need_attention=True)
            shown.append(explained(series.name, series, fitted, result, run.threshold))
        return shown


def explained(name: str, series, fitted, result, threshold: float) -> Shown:
    """The series' flagged rows and the attention of its most anomalous one, drawn
    (:func:`~attnkit.apps.anomaly.views.plot_explained`); with no row flagged, the row that
    scored highest."""
    from attnkit.apps.anomaly.views import explain, plot_explained
    from attnkit.interpret.run_report import png_bytes

    start = fitted.train_rows
    details = {"threshold": threshold, "scored_rows": len(series) - start}
    if result.attention is None:
        flagged = int((result.score[start:] >= threshold).sum())
        return Shown(
            name, f"{flagged} rows flagged; this detector has no attention", details=details
        )
    found = explain(series, result, threshold, start=start)
    details["anomalies"] = len(found)
    top = found or explain(series, result, float(result.score[start:].max()), start=start)
    if not top:
        return Shown(name, "no row scored", details=details)
    pick = max(top, key=lambda a: a.score)
    picture = png_bytes(lambda path: plot_explained(series, result, pick, path, threshold))
    what = "most anomalous flagged row" if found else "highest score (not flagged)"
    output = f"{len(found)} anomalies; {what}: {pick.timestamp} (score {pick.score:.3g})"
    details["attention_inside"] = pick.mass_inside
    return Shown(name, output, picture=picture, details=details)


APP = AnomalyApp()
