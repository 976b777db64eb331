"""The captioning task (Xu et al. 2015 on generated scenes) behind the run commands of
:mod:`attnkit.apps` (``attnkit train``, ``attnkit evaluate``).

A run directory holds ``config.yaml``, ``model.safetensors`` (the best epoch by validation exact
match, then BLEU), ``vocab.json``, ``metrics.json`` (the engine's per-epoch history, the best
epoch's row under ``best``, the training ``seconds``, and the scores ``evaluate`` adds per
split) and ``checkpoints/`` for ``--resume``. Python API::

    from attnkit.apps.captioning.task import load_experiment, train, load_captioner, caption_scenes
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnkit.apps.captioning.config import (  # noqa: F401  (the Python API)
    CaptionExperiment,
    CaptioningConfig,
    CaptionTrainConfig,
    SceneDataConfig,
    load_experiment,
)
from attnkit.apps.captioning.data import scenes_for, tensors  # noqa: F401
from attnkit.apps.captioning.inference import (  # noqa: F401
    Caption,
    build,
    caption_images,
    caption_scenes,
    load_captioner,
    read_image,
)
from attnkit.apps.captioning.training import CaptioningTask, train  # noqa: F401
from attnkit.apps.captioning.views import score_captions
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import Resume, fit


def load_config(config: str | Path, overrides: Sequence[str] = ()) -> CaptioningConfig:
    """Read a captioning config (``--set`` overrides applied); errors name file, line, field."""
    return load_experiment(config, overrides)


def evaluate(run_dir: str | Path, split: str = "test") -> dict:
    """Score a run on ``split`` and record the scores under ``split`` in ``metrics.json``."""
    if split not in ("train", "valid", "test"):
        raise ValueError(f"unknown split {split!r}; choose train, valid or test")
    cfg, vocab, model = load_captioner(run_dir)
    scenes = scenes_for(cfg, split)
    scores = score_captions(
        caption_scenes(model, vocab, scenes, cfg.train.max_len), scenes, cfg.model.grid
    )
    run = RunDir(run_dir)
    metrics = run.read_metrics()
    metrics[split] = scores
    run.write_metrics(metrics)
    return scores


def train_run(
    cfg: CaptioningConfig, run_dir: Path | None, *, resume: Resume = False, progress=False
) -> str:
    """Train ``cfg`` into ``run_dir`` (default ``runs/NAME``); ``resume`` may be ``"auto"``.
    Returns the summary line ``attnkit train`` prints."""
    task = CaptioningTask(cfg)
    result = fit(task, run_dir or Path("runs") / cfg.name, resume=resume, progress=progress)
    return task.summary(result)


def train_from_config(
    config: Path, run_dir: Path | None, *, resume: Resume = False, progress=False, overrides=()
) -> str:
    """:func:`train_run` of the config file ``config``."""
    return train_run(load_config(config, overrides), run_dir, resume=resume, progress=progress)


def evaluate_run_dir(run_dir: Path, *, split: str = "test", data_dir: str | None = None) -> str:
    """``attnkit evaluate RUN_DIR`` for a captioning run (the data are generated: no data_dir)."""
    s = evaluate(run_dir, split)
    return (
        f"{run_dir} {split}: BLEU {s['bleu']:.2f} ({s['bleu_signature']}), exact match "
        f"{s['exact_match']:.3f}, attention in box {s['mass_in_box']:.3f}, pointing "
        f"{s['pointing']:.3f} ({s['nouns']} nouns, {s['n']} captions)"
    )


def predict_run(run_dir: Path, inputs: list[Path], *, output: Path | None = None) -> str:
    """``attnkit predict RUN IMAGE...``: the greedy caption of each picture (resized to the
    run's canvas), one ``path<TAB>caption`` line per file; ``output``: also written there.
    ``attnkit caption`` also draws where each word looked."""
    if not inputs:
        raise ValueError("give the image files to caption (PNG or JPEG)")
    cfg, vocab, model = load_captioner(run_dir)
    images = np.stack([read_image(p, cfg.data.canvas) for p in inputs])  # (N, S, S, 3)
    captions = caption_images(model, vocab, images.transpose(0, 3, 1, 2), cfg.train.max_len)
    text = "\n".join(f"{p}\t{c.text}" for p, c in zip(inputs, captions, strict=True))
    if output is not None:
        output.write_text(text + "\n", encoding="utf-8")
    return text


@dataclass
class CaptioningRun:
    """``attnkit.load_run`` of a captioning run: ``run.predict(images)`` gives each image's
    caption with its attention map per word (``Caption.words``, ``Caption.alpha (T, L)``)."""

    path: Path
    config: CaptioningConfig
    vocab: object
    model: object
    task: str = "captioning"

    def predict(self, images):
        """Greedy captions of ``images (N, 3, S, S)`` with their attention."""
        return caption_images(self.model, self.vocab, images, self.config.train.max_len)


def open_run(path: str | Path, checkpoint: str = "best") -> CaptioningRun:
    if checkpoint != "best":
        raise ValueError(f"a captioning run keeps its best model only, not {checkpoint!r}")
    cfg, vocab, model = load_captioner(path)
    return CaptioningRun(Path(path), cfg, vocab, model)
