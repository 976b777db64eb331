"""Train several models on the same data and compare BLEU by source length.

This is the experiment of Bahdanau et al. 2015, Fig. 2: an encoder-decoder without attention
squeezes the source into one vector and loses BLEU as sentences get longer; with attention the
decoder looks back at every encoder state and the curve stays flat.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from attnkit.apps.translation.config import TranslationConfig, load_experiment
from attnkit.apps.translation.decode.evaluate import Evaluation, evaluate_run
from attnkit.apps.translation.training import train
from attnkit.config import ConfigError
from attnkit.engine.rundir import RunDir
from attnkit.engine.trainer import TrainResult

log = logging.getLogger(__name__)

EDGES = (10, 20, 30, 40)
BOTTLENECK_MODELS = ("none", "bahdanau", "transformer")


def packaged_config(name: str, overrides: Sequence[str] = ()) -> TranslationConfig:
    """A config shipped inside the package (``attnkit/apps/translation/configs/NAME.yaml``),
    with ``--set``-style ``overrides`` (``"model.positions=rope"``)."""
    path = resources.files("attnkit.apps.translation") / "configs" / f"{name}.yaml"
    with resources.as_file(path) as real:
        return load_experiment(real, overrides)


@dataclass
class Compared:
    """One model's training result and evaluation (``decode_seconds``: its wall time)."""

    name: str
    result: TrainResult
    evaluation: Evaluation
    decode_seconds: float = 0.0


def compare(
    configs: dict[str, TranslationConfig],
    out_dir: str | Path,
    *,
    split: str = "test",
    beam_size: int | None = None,
    progress: bool = True,
    reuse: bool = True,
    edges: Sequence[int] = EDGES,
) -> list[Compared]:
    """Train (or, with ``reuse``, load already trained) runs ``out_dir/NAME`` and evaluate them.

    Writes ``out_dir/results.json`` with BLEU, chrF and BLEU per source-length bucket
    (``edges``: the buckets' upper bounds in source words).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    compared = []
    for name, cfg in configs.items():
        run = RunDir(out_dir / name)
        if reuse and run.model.exists() and run.metrics.exists() and _trained_with(run, cfg):
            log.info("%s: reusing the trained model in %s", name, run.root)
            result = _result_from_metrics(run)
        else:
            _keep_aside(run)
            kind = cfg.model.arch if cfg.model.arch != "rnn" else f"rnn, {cfg.model.attention}"
            log.info("%s: training (%s)", name, kind)
            result = train(cfg, run.root, progress=progress)
        start = time.perf_counter()
        evaluation = evaluate_run(run.root, split, beam_size=beam_size)
        seconds = time.perf_counter() - start
        evaluation.by_length = _buckets(evaluation, edges)
        compared.append(Compared(name, result, evaluation, seconds))
        log.info("%s: %s BLEU %.2f", name, split, evaluation.scores.bleu)
    _write_results(compared, out_dir / "results.json")
    return compared


def _buckets(evaluation: Evaluation, edges: Sequence[int]) -> list[dict]:
    from attnkit.metrics import bleu_by_length

    sources = [t.source for t in evaluation.translations]
    hyps = [t.text for t in evaluation.translations]
    return bleu_by_length(sources, hyps, evaluation.references, edges)


def _trained_with(run: RunDir, cfg: TranslationConfig) -> bool:
    """Whether ``run`` was trained from ``cfg`` (a changed config, e.g. after an upgrade of
    the demo, trains again rather than reusing a stale run)."""
    try:
        return load_experiment(run.config) == cfg
    except (ConfigError, OSError):
        return False


def _keep_aside(run: RunDir) -> None:
    """Before training into ``run`` again, move what is there to ``NAME.replaced-TIME``: a
    trained run is never overwritten or deleted."""
    if run.root.exists() and any(run.root.iterdir()):
        aside = run.root.with_name(f"{run.root.name}.replaced-{time.strftime('%Y%m%d-%H%M%S')}")
        run.root.rename(aside)
        log.info("%s: kept the earlier run as %s; training again", run.root, aside)


def _result_from_metrics(run: RunDir) -> TrainResult:
    metrics = run.read_metrics()
    return TrainResult.from_history(run.root, metrics["history"], metrics["n_parameters"])


def _write_results(compared: list[Compared], path: Path) -> None:
    rows = {
        c.name: {
            "bleu": c.evaluation.scores.bleu,
            "chrf": c.evaluation.scores.chrf,
            "bleu_signature": c.evaluation.scores.bleu_signature,
            "by_length": c.evaluation.by_length,
            "train_seconds": c.result.seconds,
            "epochs": c.result.epochs_run,
            "parameters": c.result.n_parameters,
            "beam_size": c.evaluation.beam_size,
            "decode_seconds": c.decode_seconds,
        }
        for c in compared
    }
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")


def plot_by_length(compared: list[Compared], path: str | Path, seen: int | None = None) -> Path:
    """BLEU against source length, one line per model (Bahdanau et al. 2015, Fig. 2); the
    first ``seen`` buckets are shaded as the lengths seen in training."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for c in compared:
        rows = c.evaluation.by_length
        ax.plot([r["bucket"] for r in rows], [r["bleu"] for r in rows], marker="o", label=c.name)
    if seen:
        ax.axvspan(-0.5, seen - 0.5, color="0.9", zorder=0, label="lengths seen in training")
    ax.set_xlabel("source length (words)")
    ax.set_ylabel("BLEU")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def bucket_table(compared: list[Compared]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of BLEU per bucket (rows: buckets, columns: models)."""
    buckets = [r["bucket"] for r in compared[0].evaluation.by_length]
    header = ["source words", "n", *[c.name for c in compared]]
    rows = []
    for i, bucket in enumerate(buckets):
        n = compared[0].evaluation.by_length[i]["n"]
        cells = [f"{c.evaluation.by_length[i]['bleu']:.1f}" for c in compared]
        rows.append([bucket, str(n), *cells])
    rows.append(
        [
            "all",
            str(len(compared[0].evaluation.translations)),
            *[f"{c.evaluation.scores.bleu:.1f}" for c in compared],
        ]
    )
    return header, rows
