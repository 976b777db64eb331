"""Shared test settings: deterministic seeds, bounded hypothesis runs, few threads."""

import os

import pytest
import torch
from hypothesis import HealthCheck, settings

torch.set_num_threads(int(os.environ.get("ATTNKIT_TEST_THREADS", "2")))

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
