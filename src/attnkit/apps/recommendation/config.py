"""The configuration of a sequential recommendation run (``task: recommendation``): ``data``,
``model`` and ``train``; see ``configs/sasrec-games.yaml``. :func:`load_config` rejects unknown
keys and bad values with the file, line and field (:mod:`attnkit.config`).

- ``data``: a ``user item [timestamp]`` file (:func:`~attnkit.apps.recommendation.data.
  read_interactions`), by default SASRec's Games in the shared data folder, split by the
  authors' rule (the last item of a user with 3 or more is the test target, the one before
  it the validation target); the sampled protocol's negatives and users (Kang & McAuley 2018,
  §IV-C: 100 negatives, 10,000 users).
- ``model``: SASRec (:class:`~attnkit.apps.recommendation.model.SASRecConfig`) or, with
  ``kind: gru``, the GRU4Rec-style baseline of the same width.
- ``train``: the engine's settings; the monitor is the validation NDCG@10 (sampled).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnkit.apps.recommendation.model import SASRecConfig
from attnkit.config import Checked, bounded, load_yaml
from attnkit.engine.settings import Schedule, TrainSettings


@dataclass
class RecommendationDataConfig(Checked):
    """Which interactions, and how they are scored."""

    # a user item [timestamp] file (TSV, CSV or spaces); None: sasrec/Video.txt (Games) in the
    # shared data folder (data_dir, else $ATTNKIT_DATA_DIR or ../shared/data)
    path: Path | None = None
    data_dir: Path | None = None
    negatives: int = bounded(100, ge=1)  # sampled protocol: items ranked with the target [100]
    # authors: negatives drawn with replacement, only training items refused (kang205/SASRec);
    # unseen: distinct items outside the user's whole history
    rule: Literal["authors", "unseen"] = "authors"
    eval_users: int | None = bounded(10_000, ge=1)  # users scored by evaluate [10,000]; None: all
    valid_users: int | None = bounded(2_000, ge=1)  # users scored after each epoch; None: all
    seed: int = bounded(0, ge=0)  # the negatives and the users scored
    limit: int | None = bounded(None, ge=1)  # read only the N users of smallest id (tests)


@dataclass
class RecommendationModelConfig(SASRecConfig):
    """SASRec's shape (the Games settings by default), or the GRU baseline's (``kind: gru``:
    ``d_model``, ``gru_layers``, ``dropout``; ``max_len`` still bounds the history read)."""

    kind: Literal["sasrec", "gru"] = "sasrec"
    gru_layers: int = bounded(1, ge=1)


@dataclass
class RecommendationTrainConfig(TrainSettings):
    """The engine's settings with the authors' defaults (kang205/SASRec ``main.py``: Adam,
    lr 0.001, betas 0.9/0.98, batch 128)."""

    epochs: int = 200
    learning_rate: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.98)
    warmup_steps: int = 1  # unused by the constant schedule
    schedule: Schedule = "constant"
    clip_norm: float = 0.0
    patience: int = 10
    seed: int = 0
    batch_size: int = bounded(128, ge=1)  # users a batch
    # bce: the paper's binary cross-entropy with one sampled negative a position (§III-E);
    # ce: cross-entropy over every item (Klenitskiy & Vasilev 2023), for full ranking
    loss: Literal["bce", "ce"] = "bce"


@dataclass
class RecommendationConfig(Checked):
    """A whole recommendation run: ``name`` plus the three sections."""

    name: str = "recommendation"
    task: Literal["recommendation"] = "recommendation"
    data: RecommendationDataConfig = field(default_factory=RecommendationDataConfig)
    model: RecommendationModelConfig = field(default_factory=RecommendationModelConfig)
    train: RecommendationTrainConfig = field(default_factory=RecommendationTrainConfig)


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> RecommendationConfig:
    """Read a recommendation YAML config after ``overrides``; errors name file, line and field."""
    return load_yaml(RecommendationConfig, path, overrides)
