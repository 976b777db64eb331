"""The shipped anomaly-detection configs load as typed AnomalyConfig with their file's name."""

from pathlib import Path

import pytest

from attnkit.apps import task_of
from attnkit.apps.anomaly.task import AnomalyConfig
from attnkit.config import load_yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs").glob("nab-*.yaml")) + sorted(
    (ROOT / "configs").glob("solar-*.yaml")
)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_anomaly_configs_load(path):
    assert task_of(path) == "anomaly-detection"
    cfg = load_yaml(AnomalyConfig, path)
    assert cfg.name == path.stem
    assert cfg.detector.model in path.stem
    if cfg.data.source == "solar":  # training rows stay inside the anomaly-free days
        rows = cfg.detector.train_fraction * cfg.data.days * cfg.data.steps_per_day
        assert rows < cfg.data.clean_days * cfg.data.steps_per_day
