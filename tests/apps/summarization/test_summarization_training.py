"""The summarization task's loss: the negative log-likelihood plus ``lambda`` times the
coverage loss (See et al. 2017, eq. 13) from epoch ``train.coverage_from`` on, nothing of it
before; batches of similar source length that cover every paper once per epoch."""

from __future__ import annotations

import torch

from attnkit.apps.summarization.config import SummarizationConfig
from attnkit.apps.summarization.copytask import write_copy_task
from attnkit.apps.summarization.training import SummarizationTask


def _task(tmp_path, **train) -> SummarizationTask:
    paths = write_copy_task(tmp_path, sizes=(40, 4, 4))
    cfg = SummarizationConfig()
    cfg.data.train_path, cfg.data.valid_path = paths["train"], paths["valid"]
    cfg.model.embed_dim = cfg.model.hidden_dim = cfg.model.attention_dim = 8
    cfg.train.batch_size, cfg.train.valid_papers = 8, 2
    for key, value in train.items():
        setattr(cfg.train, key, value)
    task = SummarizationTask(cfg)
    task.prepare(None, resume=False)
    return task


def test_the_coverage_loss_counts_from_its_epoch(tmp_path):
    task = _task(tmp_path, coverage_weight=0.5, coverage_from=3)
    torch.manual_seed(0)
    model = task.build_model().eval()
    items = [i for i, _ in task.epoch_batches(1)[0]]
    losses = {}
    for epoch in (1, 2, 3, 4):
        found = task.loss(model, [(i, epoch) for i in items])
        losses[epoch] = (float(found.total.detach()), found.stats)
    nll, cover = (
        losses[1][1][k] * task.units([(i, 1) for i in items]) for k in ("nll", "coverage")
    )
    assert cover > 0
    assert abs(losses[1][0] - nll) < 1e-3 and abs(losses[2][0] - nll) < 1e-3
    assert abs(losses[3][0] - (nll + 0.5 * cover)) < 1e-3 and losses[4][0] == losses[3][0]


def test_an_epoch_visits_every_paper_once_in_batches_of_similar_length(tmp_path):
    task = _task(tmp_path)
    batches = task.epoch_batches(2)
    seen = sorted(i for batch in batches for i, epoch in batch if epoch == 2)
    assert seen == list(range(40)) and all(len(b) <= 8 for b in batches)
    assert task.epoch_batches(2) == batches and task.epoch_batches(3) != batches
