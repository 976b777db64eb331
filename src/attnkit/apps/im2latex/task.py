"""Image to LaTeX behind ``attnkit train`` / ``evaluate`` / ``predict`` (:mod:`attnkit.apps`).

A config (``task: im2latex``; see ``configs/formulas-im2latex.yaml`` and
:mod:`attnkit.apps.im2latex.config`) has ``data``, ``model``
(:class:`~attnkit.apps.im2latex.model.FormulaModelConfig`) and ``train`` sections; training is
the engine's (:mod:`attnkit.apps.im2latex.training`). A run directory holds ``config.yaml``,
``vocab.json``, ``model.safetensors``, ``metrics.json`` and ``checkpoints/``::

    attnkit train configs/formulas-im2latex.yaml -o runs/formulas
    attnkit evaluate runs/formulas --split test         # or real-test with data.real
    attnkit predict runs/formulas formula.png --picture attention.png
    attnkit report runs/formulas                          # HTML: scores, attention pictures
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from attnkit.apps.im2latex.config import Im2LatexConfig, load_config
from attnkit.apps.im2latex.images import fit
from attnkit.apps.im2latex.model import FormulaReader
from attnkit.apps.im2latex.reading import Reading, read_formulas
from attnkit.apps.im2latex.training import Im2LatexTask
from attnkit.apps.im2latex.vocab import PAD, Vocabulary
from attnkit.engine.checkpoint import load_model
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import Resume
from attnkit.engine.trainer import fit as fit_task

__all__ = ["evaluate_run_dir", "load_config", "open_run", "predict_run", "report_run", "train_run"]


def train_run(cfg: Im2LatexConfig, run_dir: Path | None, *, resume: Resume = False,
              progress: bool = False) -> str:  # fmt: skip
    """Train ``cfg`` into ``run_dir`` (default ``runs/NAME``); returns the CLI's line."""
    task = Im2LatexTask(cfg)
    out = Path(run_dir) if run_dir is not None else Path("runs") / cfg.name
    return task.summary(fit_task(task, out, resume=resume, progress=progress))


def train_from_config(config: Path, run_dir: Path | None, *, resume: Resume = False,
                      progress: bool = False, overrides: Sequence[str] = ()) -> str:  # fmt: skip
    """:func:`train_run` of the config file ``config``."""
    return train_run(load_config(config, overrides), run_dir, resume=resume, progress=progress)


@dataclass
class Im2LatexRun:
    """``attnkit.load_run`` of an im2latex run: ``run.read(images)`` decodes formulas."""

    path: Path
    config: Im2LatexConfig
    model: FormulaReader
    vocab: Vocabulary
    task: str = "im2latex"

    def read(self, images: Sequence[np.ndarray], *, beam: int | None = None,
             attention: bool = False) -> list[Reading]:  # fmt: skip
        """Formulas of ``images`` (``(H, W)``, 1 = ink), fitted to the run's largest size;
        ``beam`` defaults to the config's ``train.beam``."""
        d, t = self.config.data, self.config.train
        fitted = [fit(np.asarray(im, dtype=np.float32), d.max_height, d.max_width) for im in images]
        return read_formulas(self.model, self.vocab, fitted, beam=beam or t.beam,
                             max_len=t.max_len, attention=attention)  # fmt: skip

    def predict(self, images) -> list[list[str]]:
        """The token sequence of each image."""
        return [r.tokens for r in self.read(images)]


def open_run(path: str | Path, checkpoint: str = "best") -> Im2LatexRun:
    if checkpoint != "best":
        raise ValueError(f"an im2latex run keeps its best model only, not {checkpoint!r}")
    run = RunDir(path)
    cfg = load_config(run.existing_config())
    vocab = Vocabulary.load(run.root / "vocab.json")
    model = FormulaReader(cfg.model, len(vocab), pad_id=PAD)
    load_model(model, run.model)
    return Im2LatexRun(Path(path), cfg, model.eval(), vocab)


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """BLEU-4, exact token match and image match on ``split`` (beam ``train.beam``); the
    scores also go to ``RUN/evaluation-SPLIT.json`` with every prediction."""
    from attnkit.apps.im2latex.scores import formula_scores
    from attnkit.apps.im2latex.sets import load_split

    run = open_run(run_dir)
    data = (
        run.config.data if data_dir is None else replace(run.config.data, data_dir=Path(data_dir))
    )
    if split == "valid" and data.valid == "real":
        split = "real-valid"
    pairs = load_split(data, split)
    readings = read_formulas(run.model, run.vocab, pairs.images, beam=run.config.train.beam,
                             max_len=run.config.train.max_len)  # fmt: skip
    scores = formula_scores([r.tokens for r in readings], pairs.formulas)
    out = {
        "split": split,
        "beam": run.config.train.beam,
        "n": len(pairs),
        **scores,
        "predictions": [
            {"name": n, "truth": " ".join(f), "prediction": " ".join(r.tokens)}
            for n, f, r in zip(pairs.names, pairs.formulas, readings, strict=True)
        ],
    }
    (Path(run_dir) / f"evaluation-{split}.json").write_text(json.dumps(out, indent=1))
    return (
        f"{run_dir} {split} ({len(pairs)} formulas, beam {run.config.train.beam}): BLEU "
        f"{scores['bleu']:.2f}, exact match {scores['exact_match']:.3f}, image match "
        f"{scores['image_match']:.3f} ({scores['image_match_ws']:.3f} ignoring whitespace)"
    )


def predict_run(run_dir: Path, inputs: list[Path], *, output: Path | None = None,
                picture: Path | None = None) -> str:  # fmt: skip
    """The LaTeX of each image in ``inputs`` (``--output``: a text file, one formula per
    line); ``picture``: the first image with each token's attention."""
    from attnkit.apps.im2latex.views import plot_formula_attention

    if not inputs:
        raise ValueError("give the formula images to read (PNG or JPEG)")
    run = open_run(run_dir)
    d = run.config.data
    images = [fit(_formula_image(p), d.max_height, d.max_width) for p in inputs]
    readings = run.read(images, attention=picture is not None)
    lines = [" ".join(r.tokens) for r in readings]
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if picture is not None:
        first = readings[0]
        title = f"{inputs[0].name}: {run.path}"
        plot_formula_attention(images[0], first.tokens, first.attention, picture,
                               stride=run.model.stride, title=title)  # fmt: skip
    return "\n".join(f"{p}\t{line}" for p, line in zip(inputs, lines, strict=True))


def report_run(run_dir: Path, output: Path, *, n_examples: int = 3) -> Path:
    """The HTML report: config, history, scores and attention pictures (:mod:`.report`)."""
    from attnkit.apps.im2latex.report import write_report

    return write_report(open_run(run_dir), output, n_examples=n_examples)


def _formula_image(path: Path) -> np.ndarray:
    """A formula image (dark ink on light paper) as ink, cropped to it with a 4-pixel margin
    (pixels under 5% ink are paper); a blank image is an error naming the file."""
    from attnkit.apps.im2latex.pairs import read_image
    from attnkit.apps.im2latex.render import crop

    try:
        return crop(read_image(path), margin=4, threshold=0.05)
    except ValueError as err:
        raise ValueError(f"{path}: no formula to read ({err})") from None
