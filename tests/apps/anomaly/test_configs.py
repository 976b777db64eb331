"""The shipped anomaly-detection configs load as typed AnomalyConfig with their file's name;
out-of-range values are refused at load time with the file, line and field."""

import re
from pathlib import Path

import pytest

from attnkit.apps import task_of
from attnkit.apps.anomaly.config import AnomalyConfig, AnomalyData, DetectorConfig
from attnkit.config import ConfigError, load_yaml

ROOT = Path(__file__).resolve().parents[3]
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


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("detector", "window", 1),
        ("detector", "steps", 0),
        ("detector", "learning_rate", -0.1),
        ("detector", "batch_size", 0),
        ("detector", "train_fraction", 1.5),
        ("detector", "train_fraction", 0.0),
        ("detector", "checkpoint_every", -1),
        ("detector", "score_rows", 40),
        ("detector", "num_heads", 3),
        ("data", "days", 0),
    ],
)
def test_out_of_range_values_are_refused_with_file_line_and_field(tmp_path, section, key, value):
    source = (ROOT / "configs" / "nab-transformer.yaml").read_text()
    if re.search(rf"^  {key}:", source, flags=re.M):
        source = re.sub(rf"^  {key}: .*$", f"  {key}: {value}", source, flags=re.M)
    elif section == "data":
        source = source.replace("  source: nab\n", f"  source: nab\n  {key}: {value}\n")
    else:
        source += f"  {key}: {value}\n"
    path = tmp_path / "bad.yaml"
    path.write_text(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if text.startswith(f"  {key}:"))
    with pytest.raises(ConfigError) as err:
        load_yaml(AnomalyConfig, path)
    message = str(err.value)
    assert f"{path}, line {line}:" in message and f"{key} must" in message, message


def test_detector_ranges_name_the_field():
    with pytest.raises(ValueError, match="window must be at least 2"):
        DetectorConfig(window=1)
    with pytest.raises(ValueError, match="suppress_floor"):
        DetectorConfig(suppress_rows=24, suppress_threshold=0.2, suppress_floor=0.3)
    DetectorConfig(suppress_rows=0, suppress_threshold=0.2, suppress_floor=0.3)  # off: allowed
    with pytest.raises(ValueError, match="clean_days"):
        AnomalyData(days=10, clean_days=11)
