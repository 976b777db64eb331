"""The configured splits: generated formulas (train / valid / test) and, when ``data.real``
names a folder, its real pairs (``real-train`` / ``real-valid`` / ``real-test``).

Every image is fitted into ``data.max_height x data.max_width``
(:func:`~attnkit.apps.im2latex.images.fit`). The generated splits draw from different seeds,
``10 * seed + k`` for split ``k``, so they are disjoint draws (short formulas may still repeat
by chance).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnkit.apps.im2latex.config import FormulaDataConfig
from attnkit.apps.im2latex.examples import Drawing, generate_examples
from attnkit.apps.im2latex.images import fit
from attnkit.datadir import default_data_dir

GENERATED = ("train", "valid", "test")
REAL = {"real-train": "train", "real-valid": "validate", "real-test": "test"}


@dataclass
class FormulaSet:
    """Images ``(H, W)`` (1 = ink) with their token sequences and names, and for generated
    formulas the scale each was drawn at (:mod:`~attnkit.apps.im2latex.examples`; empty for
    real ones)."""

    images: list[np.ndarray] = field(default_factory=list)
    formulas: list[list[str]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    scales: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.images)

    def __add__(self, other: FormulaSet) -> FormulaSet:
        scales = self.scales + other.scales if self.scales and other.scales else []
        return FormulaSet(
            self.images + other.images,
            self.formulas + other.formulas,
            self.names + other.names,
            scales,
        )


def splits(data: FormulaDataConfig) -> list[str]:
    """The split names this data section offers (generated splits of size 0 are left out)."""
    made = [s for s, n in zip(GENERATED, data.generated, strict=True) if n > 0]
    return [*made, *(REAL if data.real is not None else ())]


def drawing(data: FormulaDataConfig) -> Drawing:
    """How this run's generated formulas are drawn (the grammar's depth 3, the default scale
    ranges, ``data.max_tokens`` and ``data.noise``)."""
    return Drawing(max_tokens=data.max_tokens, noise=data.noise)


def real_root(data: FormulaDataConfig) -> Path:
    """The real folder: ``data.real`` itself when it exists, else under the data directory."""
    path = Path(data.real)
    if path.is_absolute() or path.exists():
        return path
    return Path(data.data_dir or default_data_dir()) / path


def load_split(data: FormulaDataConfig, split: str, workers: int = 0) -> FormulaSet:
    """One split, images fitted to the configured size (generated ones rendered in
    ``workers`` processes when > 0)."""
    if split not in splits(data):
        raise ValueError(f"no split {split!r} in this run's data; choose one of {splits(data)}")
    if split in GENERATED:
        k = GENERATED.index(split)
        examples = generate_examples(
            data.generated[k], 10 * data.seed + k, drawing(data), workers=workers
        )
        images = [fit(im, data.max_height, data.max_width) for im, _, _ in examples]
        names = [f"{split}-{i}" for i in range(len(examples))]
        formulas = [list(t) for _, t, _ in examples]
        return FormulaSet(images, formulas, names, [s for _, _, s in examples])
    from attnkit.apps.im2latex.pairs import load_pairs  # reads real pages (PIL)

    pairs = load_pairs(real_root(data), REAL[split], limit=data.real_limit)
    images = [fit(p.image, data.max_height, data.max_width) for p in pairs]
    return FormulaSet(images, [list(p.tokens) for p in pairs], [p.name for p in pairs])


def training_set(data: FormulaDataConfig, workers: int = 0) -> FormulaSet:
    """Generated training formulas plus ``real_repeat`` copies of the real training split;
    with ``data.fresh`` only the real ones (the generated are drawn each epoch, :mod:`.fresh`)."""
    generated = data.generated[0] and not data.fresh
    train = load_split(data, "train", workers) if generated else FormulaSet()
    if data.real is not None:
        real = load_split(data, "real-train")
        for _ in range(data.real_repeat):
            train = train + real
    return train


def validation_set(data: FormulaDataConfig, workers: int = 0) -> FormulaSet:
    """The split that picks the best epoch (``data.valid``)."""
    return load_split(data, "real-valid" if data.valid == "real" else "valid", workers)
