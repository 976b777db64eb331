"""A trained image-to-LaTeX run as a Python object (``attnkit.load_run``): the formula reader
of ``model.safetensors`` with its vocabulary and config, which reads formula images and scores
a split of its data.

A run directory holds ``config.yaml``, ``vocab.json``, ``model.safetensors``, ``metrics.json``,
``checkpoints/`` and, once scored, ``evaluation-SPLIT.json`` (the scores with every
prediction, which ``attnkit report`` shows)::

    run = attnkit.load_run("runs/formulas")
    (reading,) = run.read([image], beam=5, attention=True)   # tokens, attention (T, r, c)
    scores = run.evaluate("test")                            # BLEU, exact and image match
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from attnkit.apps import require_kind
from attnkit.apps.im2latex.config import Im2LatexConfig, load_config
from attnkit.apps.im2latex.images import fit
from attnkit.apps.im2latex.model import FormulaReader
from attnkit.apps.im2latex.reading import Reading, read_formulas
from attnkit.apps.im2latex.vocab import PAD, Vocabulary
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir

if TYPE_CHECKING:
    from attnkit.apps.im2latex.sets import FormulaSet

__all__ = ["Im2LatexRun", "formula_image"]


@dataclass
class Im2LatexRun:
    """``attnkit.load_run`` of an im2latex run: ``run.read(images)`` decodes formulas."""

    path: Path
    config: Im2LatexConfig
    model: FormulaReader
    vocab: Vocabulary
    task: str = "im2latex"

    @classmethod
    def load(cls, path: str | Path) -> Im2LatexRun:
        """The run at ``path`` (its best epoch's model); a run of another kind is refused
        (:class:`~attnkit.application.WrongRunKind`)."""
        require_kind(path, "im2latex")
        run = RunDir(path)
        cfg = load_config(run.existing_config())
        vocab = Vocabulary.load(run.root / "vocab.json")
        model = FormulaReader(cfg.model, len(vocab), pad_id=PAD)
        load_model(model, run.model)
        return cls(Path(path), cfg, model.eval(), vocab)

    def read(
        self, images: Sequence[np.ndarray], *, beam: int | None = None, attention: bool = False
    ) -> list[Reading]:
        """Formulas of ``images`` (``(H, W)``, 1 = ink), fitted to the run's largest size;
        ``beam`` defaults to the config's ``train.beam``."""
        d, t = self.config.data, self.config.train
        fitted = [fit(np.asarray(im, dtype=np.float32), d.max_height, d.max_width) for im in images]
        beam = beam or t.beam
        return read_formulas(
            self.model,
            self.vocab,
            fitted,
            beam=beam,
            max_len=t.max_len,
            attention=attention,
            length_penalty=self.length_penalty() if beam > 1 else 0.0,
        )

    def length_penalty(self) -> float:
        """The beam's length penalty (``train.length_penalty``; ``valid``: chosen on the
        validation split once and kept in ``RUN/length-penalty.json``)."""
        from attnkit.apps.im2latex.length_penalty import chosen_length_penalty

        return chosen_length_penalty(self)

    def predict(self, images) -> list[list[str]]:
        """The token sequence of each image."""
        return [r.tokens for r in self.read(images)]

    def evaluate(
        self, split: str = "test", data_dir: str | Path | None = None, beam: int | None = None
    ) -> dict:
        """BLEU-4, exact token match and image match on ``split`` (``valid`` is the real
        validation split where ``data.valid`` is real), decoded with ``beam`` (default
        ``train.beam``); the record, every prediction included, is also written to
        ``RUN/evaluation-SPLIT.json``."""
        from attnkit.apps.im2latex.sets import load_split

        data = self.config.data
        if data_dir is not None:
            data = replace(data, data_dir=Path(data_dir))
        if split == "valid" and data.valid == "real":
            split = "real-valid"
        record = self.score_set(load_split(data, split), split, beam)
        self.evaluation_file(split).write_text(json.dumps(record, indent=1), encoding="utf-8")
        return record

    def evaluate_files(self, src: str | Path, ref: str | Path, beam: int | None = None) -> dict:
        """:meth:`evaluate` of a user's own formula images (``src``: a folder, or a file
        listing them) and their LaTeX (``ref``: one formula a line; :func:`.own.own_pairs`),
        the split named after ``src``; not recorded in the run (its report shows its own
        splits)."""
        from attnkit.apps.im2latex.own import own_pairs

        return self.score_set(own_pairs(src, ref, self.config.data), str(src), beam)

    def score_set(self, pairs: FormulaSet, split: str, beam: int | None = None) -> dict:
        """The record of :meth:`evaluate` for ``pairs`` (fitted images and their tokens)."""
        from attnkit.apps.im2latex.scores import formula_scores, scale_quartiles

        beam = beam or self.config.train.beam
        alpha = self.length_penalty() if beam > 1 else 0.0
        readings = read_formulas(
            self.model,
            self.vocab,
            pairs.images,
            beam=beam,
            max_len=self.config.train.max_len,
            length_penalty=alpha,
        )
        predictions = [r.tokens for r in readings]
        scores = formula_scores(predictions, pairs.formulas)
        by_scale = scale_quartiles(pairs.scales, predictions, pairs.formulas)
        return {
            "split": split,
            "beam": beam,
            "length_penalty": alpha,
            "n": len(pairs),
            **scores,
            **({"by_scale": by_scale} if by_scale else {}),
            "predictions": [
                {"name": n, "truth": " ".join(f), "prediction": " ".join(r.tokens)}
                for n, f, r in zip(pairs.names, pairs.formulas, readings, strict=True)
            ],
        }

    def evaluation_file(self, split: str) -> Path:
        return self.path / f"evaluation-{split}.json"


def formula_image(path: Path) -> np.ndarray:
    """A formula image (dark ink on light paper) as ink, cropped to it with a 4-pixel margin
    (pixels under 5% ink are paper); a blank or unreadable image is an error naming the file
    (:func:`~attnkit.apps.im2latex.image_files.read_image`'s, which names it already)."""
    from attnkit.apps.im2latex.image_files import read_image
    from attnkit.apps.im2latex.render import crop

    image = read_image(path)
    try:
        return crop(image, margin=4, threshold=0.05)
    except ValueError as err:
        raise ValueError(f"{path}: no formula to read ({err})") from None
