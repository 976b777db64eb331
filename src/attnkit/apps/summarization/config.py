"""The configuration of a summarization run (``task: summarization``): ``data``, ``model`` and
``train``; see ``configs/scitldr-pointer-generator.yaml``. :func:`load_config` rejects unknown
keys and bad values with the file, line and field (:mod:`attnkit.config`).

- ``data``: SciTLDR-A (Cachola et al. 2020) in the shared data folder, or your own JSON lines
  files of the same shape (``source``: the document's sentences, ``target``: its summaries),
  lower-cased and split into words (:func:`~attnkit.apps.summarization.data.tokenize`); the
  source cut to ``max_source`` words and the training summary to ``max_target``, as See et al.
  2017 cut CNN/Daily Mail's (400 and 100 there).
- ``model``: :class:`~attnkit.apps.summarization.model.PointerGeneratorConfig`: ``copy`` and
  ``coverage`` switch the two mechanisms, so one config file trains the four models compared.
- ``train``: the engine's settings, the coverage loss weight ``lambda`` (eq. 13) and decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.apps.summarization.model import PointerGeneratorConfig
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class SummarizationDataConfig(Checked):
    """Which documents, and how they are cut and counted."""

    # the shared data folder (default $ATTNKIT_DATA_DIR or ../shared/data): SciTLDR-A in
    # scitldr/SciTLDR-A/{train,dev,test}.jsonl
    data_dir: Path | None = None
    # your own JSON lines files instead (each line {"source": [...], "target": [...]})
    train_path: Path | None = None
    valid_path: Path | None = None
    test_path: Path | None = None
    max_source: int = bounded(400, ge=1)  # source words kept [See et al.: 400]
    max_target: int = bounded(60, ge=1)  # training summary words kept [See et al.: 100]
    min_count: int = bounded(2, ge=1)  # a word enters the vocabulary at this many uses
    max_vocab: int = bounded(20_000, ge=4)  # the most frequent words kept, specials included
    limit: int | None = bounded(None, ge=1)  # read only the first N papers of a split (tests)


@dataclass
class SummarizationTrainConfig(TrainSettings):
    """The engine's settings with this task's defaults (Adam, not See et al.'s Adagrad), the
    coverage loss weight and decoding."""

    epochs: int = 40
    learning_rate: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: Schedule = "constant"
    warmup_steps: int = 1  # unused by the constant schedule
    clip_norm: float = 2.0  # See et al.: 2
    patience: int = 5
    seed: int = 0
    batch_size: int = bounded(16, ge=1)  # papers a batch [See et al.: 16]
    coverage_weight: float = bounded(1.0, ge=0)  # lambda of eq. (13) [1]
    # the epoch from which the coverage loss counts (See et al. add it in a last phase: §5)
    coverage_from: int = bounded(1, ge=1)
    beam: int = bounded(4, ge=1)  # evaluate and predict (1 = greedy); validation is greedy
    max_len: int = bounded(40, ge=1)  # most words decoded (EOS counts)
    length_penalty: float = bounded(0.0, ge=0)  # GNMT alpha of the beam's ranking
    valid_papers: int = bounded(100, ge=0)  # greedy ROUGE after each epoch on the first N

    def check(self) -> None:
        super().check()
        if self.schedule == "plateau":
            raise ValueError(
                "schedule 'plateau' needs a validation loss, which summarization does not "
                "compute (it validates by ROUGE); choose constant or another"
            )


@dataclass
class SummarizationConfig(Checked):
    """A whole summarization run: ``name`` plus the three sections."""

    name: str = "summarization"
    task: Literal["summarization"] = "summarization"
    data: SummarizationDataConfig = field(default_factory=SummarizationDataConfig)
    model: PointerGeneratorConfig = field(default_factory=PointerGeneratorConfig)
    train: SummarizationTrainConfig = field(default_factory=SummarizationTrainConfig)


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> SummarizationConfig:
    """Read a summarization YAML config after ``overrides``; errors name file, line and field."""
    return load_yaml(SummarizationConfig, path, overrides)
