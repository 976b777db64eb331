"""The translation task behind the generic :mod:`attnkit.apps` interface."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from attnkit.apps.translation.config import load_experiment as load_config  # noqa: F401  (the tasks interface)


def train_from_config(
    config: Path,
    run_dir: Path | None,
    *,
    resume: bool | Literal["auto"] = False,
    progress: bool = False,
) -> str:
    """Train the experiment in ``config`` into ``run_dir`` (default ``runs/NAME``); ``resume``
    may be ``"auto"``: continue if the run has a checkpoint (``torchrun --max-restarts``)."""
    from attnkit.apps.translation.config import load_experiment
    from attnkit.engine.trainer import train

    cfg = load_experiment(config)
    out = run_dir or Path("runs") / cfg.name
    result = train(cfg, out, resume=resume, progress=progress)
    bleu = f", valid BLEU {result.best_bleu:.2f}" if result.best_bleu is not None else ""
    return f"{out}: best epoch {result.best_epoch}{bleu} ({result.seconds:.0f} s)"


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """BLEU and chrF of a run on ``split`` (beam search as configured)."""
    from attnkit.apps.translation.evaluate import evaluate_run

    ev = evaluate_run(run_dir, split, data_dir=data_dir)
    return (
        f"{run_dir} {split}: BLEU {ev.scores.bleu:.2f} ({ev.scores.bleu_signature}), "
        f"chrF {ev.scores.chrf:.2f}"
    )
