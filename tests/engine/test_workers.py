"""``train.workers`` (issue 34): batches collated in DataLoader worker processes train the same
weights, bit for bit, as batches collated in the training process, and resume from a
checkpoint alike; the im2latex renderer gives the same images in worker processes."""

import numpy as np
import pytest
import torch
import yaml
from safetensors.torch import load_file

import attnkit
from attnkit.apps.im2latex.examples import Drawing, generate_examples
from attnkit.engine.loading import ready_groups

SEGMENTATION = {  # elastic warps and crops: what collate does in the workers
    "name": "w",
    "task": "segmentation",
    "data": {"source": "shapes", "sizes": [24, 4, 4], "size": 32},
    "model": {"channels": [4, 8]},
    "train": {"epochs": 2, "batch_size": 4, "elastic": 2.0, "crop": 24, "threads": 1},
}
IM2LATEX = {
    "name": "w", "task": "im2latex",
    "data": {"generated": [24, 4, 4], "max_tokens": 12, "max_height": 64, "max_width": 256},
    "model": {"channels": [4, 8], "pools": [[2, 2], [2, 2]], "d_row": 6, "d_embed": 8,
              "d_hidden": 16, "d_attention": 8},
    "train": {"epochs": 1, "batch_size": 8, "max_len": 16, "warmup_steps": 3, "threads": 1},
}  # fmt: skip


def _train(cfg: dict, root, workers: int):
    path = root / f"c{workers}.yaml"
    cfg = {**cfg, "train": {**cfg["train"], "workers": workers}}
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    attnkit.train(path, root / f"run{workers}")
    return load_file(root / f"run{workers}" / "model.safetensors")


@pytest.mark.parametrize("cfg", [SEGMENTATION, IM2LATEX], ids=["segmentation", "im2latex"])
def test_workers_train_the_same_weights(cfg, tmp_path):
    alone, with_workers = _train(cfg, tmp_path, 0), _train(cfg, tmp_path, 2)
    assert alone.keys() == with_workers.keys()
    for name in alone:
        assert torch.equal(alone[name], with_workers[name]), name


class _Doubling:
    def collate(self, batch):
        return torch.tensor(batch) * 2


@pytest.mark.parametrize("workers", [0, 2])
def test_groups_keep_their_order_and_weights(workers):
    mine = [[([1, 2], 1.0), ([3], 1.0)], [([4], 0.0)]]
    got = list(ready_groups(_Doubling(), mine, workers=workers))
    assert [[(t.tolist(), w) for t, w in group] for group in got] == [
        [([2, 4], 1.0), ([6], 1.0)],
        [([8], 0.0)],
    ]


def test_rendering_in_workers_gives_the_same_images():
    alone = generate_examples(6, 3, Drawing(max_tokens=10))
    pooled = generate_examples(6, 3, Drawing(max_tokens=10), workers=2)
    assert [t for _, t, _ in alone] == [t for _, t, _ in pooled]
    assert all(np.array_equal(a, b) for (a, _, _), (b, _, _) in zip(alone, pooled, strict=True))
