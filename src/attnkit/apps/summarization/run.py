"""A trained summarization run as a Python object (``attnkit.load_run``): the model of
``model.safetensors`` with its vocabulary and config, which summarises abstracts and scores a
split.

A run directory holds ``config.yaml``, ``vocab.json``, ``model.safetensors``, ``metrics.json``,
``checkpoints/`` and, once scored, ``evaluation-SPLIT.json`` (the scores with every summary,
which ``attnkit report`` shows)::

    run = attnkit.load_run("runs/scitldr-pg")
    (s,) = run.summarize(["We propose ..."])   # s.text, s.attention (T, S), s.p_gen (T,)
    scores = run.evaluate("test")              # ROUGE-1/2/L, repeats, copying
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from attnkit.apps import require_kind
from attnkit.apps.summarization.config import SummarizationConfig, load_config
from attnkit.apps.summarization.data import Paper, Vocabulary, tokenize
from attnkit.apps.summarization.model import PointerGenerator
from attnkit.apps.summarization.summarize import Summary, summarize_papers
from attnkit.apps.summarization.training import load_papers
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir

__all__ = ["SummarizationRun", "summary_scores"]


def summary_scores(summaries: Sequence[Summary], papers: Sequence[Paper]) -> dict[str, float]:
    """ROUGE-1/2/L (F1 points, the maximum over each paper's summaries), the share of repeated
    trigrams, the share of summary words found in the source, the share of novel bigrams
    (See et al. 2017, §7.2 and Fig. 6), mean words and mean ``p_gen``."""
    from attnkit.metrics.summary import (
        copied_share,
        corpus_rouge,
        novel_ngram_share,
        repeated_trigram_share,
    )

    scores = corpus_rouge([s.text for s in summaries], [p.targets for p in papers])

    def mean(values) -> float:
        values = list(values)
        return float(np.mean(values)) if values else 0.0

    scores["repeated_trigrams"] = mean(repeated_trigram_share(s.words) for s in summaries)
    pairs = [(s.words, tokenize(p.abstract)) for s, p in zip(summaries, papers, strict=True)]
    scores["copied_words"] = mean(copied_share(words, source) for words, source in pairs)
    scores["novel_bigrams"] = mean(novel_ngram_share(words, source, 2) for words, source in pairs)
    scores["words"] = mean(len(s.words) for s in summaries)
    scores["p_gen"] = mean(float(np.mean(s.p_gen)) for s in summaries if len(s.p_gen))
    return scores


@dataclass
class SummarizationRun:
    """``attnkit.load_run`` of a summarization run: ``run.summarize(abstracts)``."""

    path: Path
    config: SummarizationConfig
    model: PointerGenerator
    vocab: Vocabulary
    task: str = "summarization"

    @classmethod
    def load(cls, path: str | Path) -> SummarizationRun:
        """The run at ``path`` (its best epoch's model); a run of another kind is refused
        (:class:`~attnkit.application.WrongRunKind`)."""
        require_kind(path, "summarization")
        run = RunDir(path)
        cfg = load_config(run.existing_config())
        vocab = Vocabulary.load(run.root / "vocab.json")
        model = PointerGenerator(cfg.model, len(vocab))
        load_model(model, run.model)
        return cls(Path(path), cfg, model.eval(), vocab)

    def summarize(self, abstracts: Sequence[str], *, beam: int | None = None) -> list[Summary]:
        """A summary of each abstract (plain text), decoded with ``beam`` (default
        ``train.beam``), with its attention, ``p_gen`` and coverage."""
        papers = []
        for i, text in enumerate(abstracts):
            if not tokenize(text):
                raise ValueError(f"abstract {i + 1} is empty: nothing to summarise")
            papers.append(Paper(f"input-{i + 1}", [text], []))
        return summarize_papers(self.model, self.vocab, self._config(beam), papers)

    def predict(self, abstracts: Sequence[str]) -> list[str]:
        """The summary text of each abstract."""
        return [s.text for s in self.summarize(abstracts)]

    def _config(self, beam: int | None) -> SummarizationConfig:
        if beam is None:
            return self.config
        return replace(self.config, train=replace(self.config.train, beam=beam))

    def evaluate(
        self, split: str = "test", data_dir: str | Path | None = None, beam: int | None = None
    ) -> dict:
        """:func:`summary_scores` of ``split`` (train, valid or test) decoded with ``beam``;
        the record, every summary included, also goes to ``RUN/evaluation-SPLIT.json``."""
        cfg = self._config(beam)
        data = cfg.data if data_dir is None else replace(cfg.data, data_dir=Path(data_dir))
        papers = load_papers(data, split)
        found = summarize_papers(self.model, self.vocab, replace(cfg, data=data), papers)
        record = {
            "split": split,
            "beam": cfg.train.beam,
            "n": len(papers),
            **summary_scores(found, papers),
            "predictions": [
                {
                    "paper_id": p.paper_id,
                    "prediction": s.text,
                    "references": p.targets,
                    "p_gen": float(np.mean(s.p_gen)) if len(s.p_gen) else None,
                }
                for s, p in zip(found, papers, strict=True)
            ],
        }
        self.evaluation_file(split).write_text(json.dumps(record, indent=1), encoding="utf-8")
        return record

    def evaluation_file(self, split: str) -> Path:
        return self.path / f"evaluation-{split}.json"
