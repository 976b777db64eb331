"""A trained anomaly-detection run as ``attnkit.load_run`` gives it: its config and tuned
threshold (detectors are per stream, so applying the run fits a fresh one on each input)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from attnkit.apps.anomaly.config import AnomalyConfig
from attnkit.config import load_yaml
from attnkit.engine.rundir import read_json

KIND = "anomaly-detection"


@dataclass
class AnomalyRun:
    """``attnkit.load_run`` of an anomaly-detection run: ``run.predict(csv)`` fits the run's
    detector settings on the CSV's first rows and scores every row, each flagged run explained
    by its attention (:class:`~attnkit.apps.anomaly.predict.CsvDetection`)."""

    path: Path
    config: AnomalyConfig
    threshold: float
    task: str = KIND
    device: str | None = None  # where detectors are fitted (None: the run's detector.device)

    def predict(self, csv: str | Path, *, repair: bool = False):
        from attnkit.apps.anomaly.predict import detect_csv

        return detect_csv(self.path, Path(csv), repair=repair, device=self.device)


def load_run_config(run_dir: str | Path) -> tuple[AnomalyConfig, float]:
    """The run's config and its tuned threshold (a run of another kind is refused, named)."""
    from attnkit.apps import require_kind

    run_dir = Path(run_dir)
    require_kind(run_dir, KIND)
    cfg = load_yaml(AnomalyConfig, run_dir / "config.yaml")
    path = run_dir / "threshold.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not a trained anomaly run (run attnkit train first)")
    return cfg, float(read_json(path)["threshold"])


def open_anomaly_run(path: str | Path) -> AnomalyRun:
    cfg, threshold = load_run_config(path)
    return AnomalyRun(Path(path), cfg, threshold)
