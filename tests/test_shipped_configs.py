"""Every config the project ships loads and validates."""

from pathlib import Path

import pytest

from attnkit.apps import app_of_config
from attnkit.apps.translation.demo import DEMO_MODELS
from attnkit.apps.translation.experiments.compare import BOTTLENECK_MODELS, packaged_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_repository_configs_load(path):
    """Each loads with its task's loader (the ``task:`` key; translation when absent)."""
    cfg = app_of_config(path).load_config(path)
    assert cfg.name == path.stem


@pytest.mark.parametrize(
    "name", [f"demo-{m}" for m in DEMO_MODELS] + [f"bottleneck-{m}" for m in BOTTLENECK_MODELS]
)
def test_packaged_configs_load(name):
    cfg = packaged_config(name)
    assert cfg.name == name and cfg.data.corpus == "default"


def test_positions_config_loads_for_every_scheme():
    from attnkit.attention import POSITIONS

    for scheme in POSITIONS:
        cfg = packaged_config("positions", [f"model.positions={scheme}", "data.train=x/train"])
        assert cfg.model.positions == scheme and cfg.data.corpus == "files"
