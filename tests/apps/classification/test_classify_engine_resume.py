"""Text classification on the engine: a run interrupted in the middle of an epoch and resumed
from its last step checkpoint ends with the same weights, bit for bit, as an uninterrupted run
(dropout on, so the RNG states must be restored; the batch order must be a pure function of
seed and epoch; the data position must be kept)."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from attnkit.apps.classification.config import TextClassificationConfig
from attnkit.apps.classification.training import ClassificationTask
from attnkit.config import from_dict
from attnkit.engine import snapshots
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import fit

CONFIG = {
    "name": "tiny-resume",
    "task": "text-classification",
    "data": {"source": "rationales", "generated_sizes": [200, 40, 0], "seed": 5, "max_len": 24},
    "model": {"kind": "rnn", "embed_dim": 16, "hidden_dim": 16, "attention_dim": 16,
              "dropout": 0.3},
    "train": {"epochs": 2, "batch_size": 16, "learning_rate": 0.01, "schedule": "linear",
              "checkpoint_every": 2, "seed": 4},
}  # fmt: skip
BATCHES_PER_EPOCH = 13  # 200 sentences in batches of 16


class Interrupted(RuntimeError):
    pass


class StopsAfter(ClassificationTask):
    """Raises (as a kill would end the process) once ``n`` updates are done."""

    def __init__(self, cfg, n: int) -> None:
        super().__init__(cfg)
        self.n, self.updates = n, 0

    def after_update(self, stats) -> None:
        self.updates += 1
        if self.updates == self.n:
            raise Interrupted(f"stopped after update {self.n}")


def _weights(run_dir) -> dict[str, torch.Tensor]:
    return load_file(str(RunDir(run_dir).model))


def test_interrupted_then_resumed_is_bitwise_equal(tmp_path):
    cfg = from_dict(TextClassificationConfig, CONFIG)
    straight = fit(ClassificationTask(cfg), tmp_path / "a", progress=False)
    assert len(straight.step_losses) == 2 * BATCHES_PER_EPOCH
    # update 18 is the 5th of epoch 2; the newest checkpoint is then update 16, mid-epoch
    with pytest.raises(Interrupted):
        fit(StopsAfter(cfg, 18), tmp_path / "b", progress=False)
    run = RunDir(tmp_path / "b")
    newest = snapshots.latest(run)
    state = json.loads((newest / "trainer.json").read_text())
    assert state["step"] == 16 and state["extra"]["position"]["epoch"] == 2
    assert state["extra"]["position"]["batch"] == 16 - BATCHES_PER_EPOCH
    resumed = fit(ClassificationTask(cfg), run.root, resume=True, progress=False)
    assert resumed.step_losses == straight.step_losses[16:]
    a, b = _weights(tmp_path / "a"), _weights(run.root)
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    untimed = [
        {k: v for k, v in h.items() if k not in ("seconds", "train_seconds")}
        for h in resumed.history
    ]
    assert untimed == [
        {k: v for k, v in h.items() if k not in ("seconds", "train_seconds")}
        for h in straight.history
    ]


def test_epoch_batches_are_a_pure_function_of_seed_and_epoch(tmp_path):
    """Asked out of order, or by a fresh task, an epoch's batches are the same; epochs differ
    and every training sentence appears once per epoch."""
    cfg = from_dict(TextClassificationConfig, CONFIG)
    first, second = ClassificationTask(cfg), ClassificationTask(cfg)
    for task in (first, second):
        task.prepare(RunDir(tmp_path / "p"), resume=False)
    third = [first.epoch_batches(e) for e in (1, 2, 3)]
    assert second.epoch_batches(3) == third[2] and second.epoch_batches(1) == third[0]
    assert first.epoch_batches(2) == third[1] and third[0] != third[1]
    for batches in third:
        assert sorted(i for b in batches for i in b) == list(range(200))
        assert len(batches) == BATCHES_PER_EPOCH and max(map(len, batches)) == 16
