"""Vision tests train tiny models: one thread, since a second one only adds synchronisation
(and, on a busy CPU, OpenMP spin-waiting that made a 3-epoch run 30x slower)."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="package")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
