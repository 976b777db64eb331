"""Summarization as an engine task: teacher-forced negative log-likelihood of the summary plus
``lambda`` times the coverage loss (See et al. 2017, eq. (13)), summed over summary words.

An epoch visits every training paper once in batches of ``train.batch_size`` of similar source
length, a pure function of ``(seed, epoch)``, so a resumed run continues exactly. Validation
scores the teacher-forced loss of the validation papers (the best epoch has the lowest) and
ROUGE of greedy summaries of the first ``train.valid_papers`` against all their summaries. ::

    from attnkit.apps.summarization.config import load_config
    from attnkit.apps.summarization.training import SummarizationTask
    from attnkit.engine.trainer import fit
    fit(SummarizationTask(load_config("configs/scitldr-pointer-generator.yaml")), "runs/pg")
"""

from __future__ import annotations

import logging
from dataclasses import replace

import torch

from attnkit.apps.summarization.batches import Batch, Example, collate, make_example
from attnkit.apps.summarization.config import SummarizationConfig, SummarizationDataConfig
from attnkit.apps.summarization.data import Paper, Vocabulary, read_papers, scitldr_path, tokenize
from attnkit.apps.summarization.model import PointerGenerator
from attnkit.engine.batching import length_batches
from attnkit.engine.rundir import RunDir
from attnkit.engine.task import Loss, Task
from attnkit.errors import DataError

log = logging.getLogger(__name__)


def split_path(data: SummarizationDataConfig, split: str):
    """The JSON lines file of ``split`` (train, valid or test): the config's own path for it,
    else SciTLDR-A's in the shared data folder."""
    own = {"train": data.train_path, "valid": data.valid_path, "test": data.test_path}
    if split not in own:
        raise ValueError(f"unknown split {split!r}; choose one of {tuple(own)}")
    return own[split] if own[split] is not None else scitldr_path(split, data.data_dir)


def load_papers(data: SummarizationDataConfig, split: str) -> list[Paper]:
    """The papers of ``split`` (the first ``data.limit`` when set)."""
    path = split_path(data, split)
    papers = read_papers(path)
    return papers[: data.limit] if data.limit is not None else papers


def build_vocabulary(data: SummarizationDataConfig, papers: list[Paper]) -> Vocabulary:
    """Words of the training abstracts and summaries, by ``min_count`` and ``max_vocab``."""
    texts = [tokenize(p.abstract) for p in papers] + [
        tokenize(t) for p in papers for t in p.targets
    ]
    return Vocabulary.build(texts, min_count=data.min_count, max_size=data.max_vocab)


def build_model(cfg: SummarizationConfig, vocab: Vocabulary) -> PointerGenerator:
    return PointerGenerator(cfg.model, len(vocab))


class SummarizationTask(Task):
    """The :class:`~attnkit.engine.task.Task` of a summarization run."""

    monitor = "valid_nll"
    mode = "min"

    def __init__(self, cfg: SummarizationConfig) -> None:
        self.config = cfg
        self.vocab: Vocabulary | None = None
        self.examples: list[Example] = []
        self.valid: list[Paper] = []
        self.valid_examples: list[Example] = []
        self.model_width = cfg.model.hidden_dim

    def prepare(self, run: RunDir | None, *, resume: bool) -> None:
        """Read the papers, build (or reload) the vocabulary, cut and encode the examples."""
        data = self.config.data
        papers = load_papers(data, "train")
        path = run.root / "vocab.json" if run is not None else None
        if resume and path is not None and path.exists():
            self.vocab = Vocabulary.load(path)
        else:
            self.vocab = build_vocabulary(data, papers)
            if path is not None:
                self.vocab.save(path)
        copy = self.config.model.copy
        self.examples = [
            make_example(p, self.vocab, data.max_source, data.max_target, copy) for p in papers
        ]
        self.valid = load_papers(data, "valid")
        self.valid_examples = [
            make_example(p, self.vocab, data.max_source, data.max_target, copy) for p in self.valid
        ]
        if not self.examples:
            raise DataError(f"{split_path(data, 'train')}: no training paper")
        log.info(
            "%d training and %d validation papers, %d words in the vocabulary",
            len(self.examples),
            len(self.valid),
            len(self.vocab),
        )

    def build_model(self) -> torch.nn.Module:
        return build_model(self.config, self.vocab)

    def epoch_batches(self, epoch: int) -> list[list[tuple[int, int]]]:
        """Every training paper once as ``(paper, epoch)``, in batches of similar source
        length (a pure function of ``(seed, epoch)``)."""
        t = self.config.train
        lengths = [len(e.source_ids) for e in self.examples]
        cut = length_batches(lengths, seed=t.seed, epoch=epoch, size=t.batch_size)
        return [[(i, epoch) for i in batch] for batch in cut]

    def units(self, items: list[tuple[int, int]]) -> int:
        return sum(len(self.examples[i].target_ids) - 1 for i, _ in items)

    def collate(self, items: list[tuple[int, int]]) -> Batch:
        batch = collate([self.examples[i] for i, _ in items])
        batch.epoch = items[0][1] if items else 1
        return batch

    def coverage_weight(self, epoch: int) -> float:
        """``lambda`` of eq. (13) in ``epoch``: 0 before ``train.coverage_from`` (See et al.
        2017, §5: coverage added as a last phase of training), ``train.coverage_weight``
        from it on."""
        t = self.config.train
        return t.coverage_weight if epoch >= t.coverage_from else 0.0

    def loss(self, model, batch: Batch | list) -> Loss:
        if not isinstance(batch, Batch):
            batch = self.collate(batch)
        device = next(model.parameters()).device
        out = model(batch.src.to(device), batch.src_mask.to(device), batch.tgt_in.to(device))
        nll, cover = model.losses(out, batch.tgt_out.to(device))
        units = max(batch.units, 1)
        stats = {"nll": float(nll.detach()) / units, "coverage": float(cover.detach()) / units}
        return Loss(nll + self.coverage_weight(batch.epoch) * cover, batch.units, stats)

    @torch.no_grad()
    def validate(self, model) -> dict[str, float]:
        """The teacher-forced loss per word of the validation papers' first summaries (the
        monitor), and ROUGE-1/2/L of greedy summaries of the first ``train.valid_papers``
        against all their summaries."""
        from attnkit.apps.summarization.summarize import summarize_papers
        from attnkit.metrics.summary import corpus_rouge

        if not self.valid:
            return {}
        model.eval()
        total, units = 0.0, 0
        for k in range(0, len(self.valid_examples), 32):
            batch = collate(self.valid_examples[k : k + 32])
            found = self.loss(model, batch)
            total, units = total + float(found.stats["nll"]) * batch.units, units + batch.units
        scores = {"valid_nll": total / max(units, 1)}
        papers = self.valid[: self.config.train.valid_papers]
        cfg = replace(self.config, train=replace(self.config.train, beam=1))
        found = summarize_papers(model, self.vocab, cfg, papers)
        rouge = corpus_rouge([s.text for s in found], [p.targets for p in papers])
        return scores | {f"valid_{k}": v for k, v in rouge.items()}
