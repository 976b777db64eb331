"""The text-classification task behind ``attnkit train`` / ``attnkit evaluate``.

Training is the engine's loop (:func:`attnkit.engine.trainer.fit`) on
:class:`~attnkit.apps.classification.training.ClassificationTask`: cross-entropy, AdamW,
gradient clipping, a constant or linear warm-up/decay learning rate, the model with the best
dev accuracy kept. The run directory holds ``config.yaml``, ``model.safetensors`` (best), the
tokenizer, ``metrics.json`` (per-epoch history, best dev accuracy, test accuracy where the data
has a labelled test split) and kill-safe ``checkpoints/`` for an exact ``--resume``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attnkit.apps.classification.config import TextClassificationConfig, load_classifier_config
from attnkit.apps.classification.data import load_split

__all__ = [
    "evaluate_run_dir",
    "load_config",
    "load_split",
    "predict_run",
    "train_from_config",
    "train_run",
]


def load_config(config: str | Path, overrides: Sequence[str] = ()) -> TextClassificationConfig:
    """Read a text-classification config (``--set`` overrides applied); errors name the file,
    line and field."""
    return load_classifier_config(config, overrides)


def train_run(
    cfg: TextClassificationConfig, run_dir: Path | None, *, resume: bool | str = False,
    progress: bool = False,
) -> str:  # fmt: skip
    """Train ``cfg`` into ``run_dir`` (default ``runs/NAME``); ``resume``: False, True or
    ``"auto"`` (see :class:`~attnkit.engine.trainer.Trainer`). Returns the summary line."""
    from attnkit.apps.classification.training import ClassificationTask
    from attnkit.engine.trainer import fit

    task = ClassificationTask(cfg)
    result = fit(task, run_dir or Path("runs") / cfg.name, resume=resume, progress=progress)
    return task.summary(result)


def train_from_config(
    config: Path, run_dir: Path | None, *, resume: bool | str = False, progress: bool = False,
    overrides: Sequence[str] = (),
) -> str:  # fmt: skip
    """:func:`train_run` of the config file ``config``."""
    return train_run(load_config(config, overrides), run_dir, resume=resume, progress=progress)


def evaluate_run_dir(
    run_dir: Path, *, split: str = "dev", data_dir: str | None = None, tfidf: bool | None = None
) -> str:
    """Accuracy of a trained run on ``split`` (``train``, ``dev``, its alias ``valid``, or
    ``test``); with ``tfidf`` (default: the config's ``evaluate.tfidf_baseline``) also TF-IDF
    + logistic regression trained on the same data."""
    from attnkit.apps.classification.classifier import TextClassifier

    split = "dev" if split == "valid" else split

    clf = TextClassifier.load(run_dir)
    cfg = clf.config
    examples = load_split(cfg, split, data_dir)
    acc = clf.accuracy([e.text for e in examples], [e.label for e in examples])
    lines = [f"{run_dir} {split}: accuracy {100 * acc:.2f}% ({len(examples)} examples)"]
    if cfg.evaluate.tfidf_baseline if tfidf is None else tfidf:
        from attnkit.apps.classification.token_weights import TfidfBaseline

        train = load_split(cfg, "train", data_dir)
        baseline = TfidfBaseline.fit([e.text for e in train], [e.label for e in train])
        base_acc = baseline.accuracy([e.text for e in examples], [e.label for e in examples])
        lines.append(f"TF-IDF + logistic regression {split}: accuracy {100 * base_acc:.2f}%")
    return "\n".join(lines)


def predict_run(run_dir: Path, inputs: list[Path], *, output: Path | None = None) -> str:
    """Label each line of ``inputs`` (or stdin): per text, ``label<TAB>text``, then a line of
    ``token:weight`` pairs (the run's attention weights)."""
    import sys

    from attnkit.apps.classification.classifier import TextClassifier
    from attnkit.textfiles import read_text

    if inputs:  # strict UTF-8, no NUL, BOM removed; errors name the file, line and column
        texts = [s.removesuffix("\r") for p in inputs for s in read_text(p).split("\n")]
    else:
        texts = [line.rstrip("\n") for line in sys.stdin]
    texts = [t for t in texts if t.strip()]
    rows = prediction_lines(TextClassifier.load(run_dir), texts)
    if output is not None:
        output.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        return ""
    return "\n".join(rows)


def prediction_lines(clf, texts: Sequence[str]) -> list[str]:
    """Per text: ``label<TAB>text``, a newline, then a tab and its ``token:weight`` pairs."""
    labels, weights = clf.predict(list(texts))
    return [
        f"{label}\t{text}\n\t" + " ".join(f"{tok}:{w:.2f}" for tok, w in pairs)
        for text, label, pairs in zip(texts, labels, weights, strict=True)
    ]


def open_run(path: str | Path, checkpoint: str = "best"):
    """``attnkit.load_run``: the run's :class:`~attnkit.apps.classification.classifier.
    TextClassifier`; ``run.predict(texts)`` gives labels and each token's attention weight."""
    from attnkit.apps.classification.classifier import TextClassifier

    if checkpoint != "best":
        raise ValueError(f"a text-classification run keeps its best model only, not {checkpoint!r}")
    return TextClassifier.load(path)
