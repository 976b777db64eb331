"""Fresh generated formulas every epoch (``data.fresh``): epoch 1 is the fixed pool, later
epochs are new formulas, the plan made without rendering is what collate renders, and a run
trains on them with the batches rendered in a DataLoader worker."""

from __future__ import annotations

import numpy as np
import yaml
from typer.testing import CliRunner

from attnkit.apps.im2latex.config import Im2LatexConfig, load_config
from attnkit.apps.im2latex.fresh import Fresh, plan_epoch, render_fresh
from attnkit.apps.im2latex.sets import load_split
from attnkit.apps.im2latex.training import Im2LatexTask
from attnkit.apps.im2latex.vocab import PAD
from attnkit.cli import app
from attnkit.engine.rundir import RunDir

FRESH = {
    "name": "fresh", "task": "im2latex",
    "data": {"generated": [24, 4, 4], "max_tokens": 10, "max_height": 64, "max_width": 256,
             "fresh": True},
    "model": {"channels": [4, 8], "pools": [[2, 2], [2, 2]], "d_row": 6, "d_embed": 8,
              "d_hidden": 16, "d_attention": 8},
    "train": {"epochs": 2, "batch_size": 8, "max_len": 14, "beam": 1, "warmup_steps": 2,
              "workers": 1},
}  # fmt: skip


def _config(tmp_path) -> Im2LatexConfig:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(FRESH), encoding="utf-8")
    return load_config(path)


def test_epoch_one_is_the_fixed_pool_and_later_epochs_are_new(tmp_path):
    data = _config(tmp_path).data
    pool = load_split(data, "train")
    first, second = plan_epoch(data, 1), plan_epoch(data, 2)
    assert [list(f.tokens) for f in first] == pool.formulas
    assert [f.k for f in second] == list(range(24, 48))
    image, tokens = render_fresh(first[3], data)
    np.testing.assert_array_equal(image, pool.images[3])
    assert tokens == pool.formulas[3]
    assert [list(f.tokens) for f in second] != pool.formulas


def test_the_batches_cover_the_epoch_and_count_what_collate_renders(tmp_path):
    task = Im2LatexTask(_config(tmp_path))
    (tmp_path / "run").mkdir()
    task.prepare(RunDir(tmp_path / "run"), resume=False)
    assert len(task.train_set) == 0  # no real data: every formula is fresh
    batches = task.epoch_batches(2)
    items = [i for b in batches for i in b]
    assert sorted(i.k for i in items) == list(range(24, 48))
    assert all(isinstance(i, Fresh) for i in items)
    ready = task.collate(batches[0])
    assert ready.units == task.units(batches[0]) == sum(len(i.tokens) + 1 for i in batches[0])
    assert ready.ids.shape[0] == len(batches[0]) and (ready.ids[:, 0] != PAD).all()
    assert task.epoch_batches(2) == batches  # a pure function of (seed, epoch)


def test_a_fresh_run_trains_with_a_rendering_worker(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(FRESH), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "valid_bleu" in result.output
