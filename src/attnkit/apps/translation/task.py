"""Translation behind the run commands (:mod:`attnkit.apps`): ``attnkit train``,
``evaluate``, ``predict`` (the same as ``translate``), ``report`` and ``serve``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from attnkit.apps.translation.config import TranslationConfig, load_experiment
from attnkit.apps.translation.run import open_run  # noqa: F401  (attnkit.load_run)


def load_config(config: str | Path, overrides: Sequence[str] = ()) -> TranslationConfig:
    """Read a translation config (``--set`` overrides applied); errors name file, line, field."""
    return load_experiment(config, overrides)


def train_run(
    cfg: TranslationConfig,
    run_dir: Path | None,
    *,
    resume: bool | Literal["auto"] = False,
    progress: bool = False,
) -> str:
    """Train ``cfg`` into ``run_dir`` (default ``runs/NAME``); ``resume`` may be ``"auto"``:
    continue if the run has a checkpoint (``torchrun --max-restarts``). Returns the summary."""
    from attnkit.apps.translation.training import TranslationTask
    from attnkit.engine.trainer import fit

    task = TranslationTask(cfg)
    result = fit(task, run_dir or Path("runs") / cfg.name, resume=resume, progress=progress)
    return task.summary(result)


def train_from_config(
    config: Path, run_dir: Path | None, *, resume=False, progress=False, overrides=()
) -> str:
    """:func:`train_run` of the config file ``config``."""
    return train_run(load_config(config, overrides), run_dir, resume=resume, progress=progress)


def evaluate_run_dir(
    run_dir: Path, *, split: str = "test", data_dir: str | None = None, beam: int | None = None,
    checkpoint: str = "best", bf16: bool | None = None, output: Path | None = None,
) -> str:  # fmt: skip
    """BLEU and chrF of a run on ``split`` (beam search as configured), BLEU by source length;
    ``output``: also write the translations there, one per line."""
    import io

    from rich.console import Console
    from rich.table import Table

    from attnkit.apps.translation.evaluate import evaluate_run

    ev = evaluate_run(run_dir, split, beam_size=beam, checkpoint=checkpoint, data_dir=data_dir,
                      bf16=bf16)  # fmt: skip
    console = Console(record=True, file=io.StringIO(), width=100)  # rendered to text
    console.print(f"{run_dir} {split} (beam {ev.beam_size}, {ev.scores.n_sentences} sentences)")
    console.print(f"BLEU {ev.scores.bleu:.2f}  {ev.scores.bleu_signature}")
    console.print(f"chrF {ev.scores.chrf:.2f}  {ev.scores.chrf_signature}")
    table = Table("source words", "sentences", "BLEU", title="BLEU by source length")
    for row in ev.by_length:
        table.add_row(row["bucket"], str(row["n"]), f"{row['bleu']:.2f}")
    console.print(table)
    if output is not None:
        output.write_text("".join(t.text + "\n" for t in ev.translations), encoding="utf-8")
    return console.export_text().rstrip("\n")


def predict_run(run_dir: Path, inputs: list[Path], *, output: Path | None = None) -> str:
    """Translate each line of ``inputs`` (or stdin) with the run's beam; one line each."""
    import sys

    from attnkit.apps.translation.data.corpora import read_lines
    from attnkit.apps.translation.run import load_run
    from attnkit.apps.translation.translate import translate_texts

    lines = [line for path in inputs for line in read_lines(path)]
    if not inputs:
        lines = [line.rstrip("\n") for line in sys.stdin]
    cfg, tokenizer, model = load_run(run_dir)
    text = "\n".join(t.text for t in translate_texts(model, tokenizer, lines, cfg.decode))
    if output is not None:
        output.write_text(text + "\n" if text else "", encoding="utf-8")
        return ""
    return text


def report_run(run_dir: Path, output: Path, *, n_examples: int = 3) -> Path:
    """The self-contained HTML report of the run (:mod:`attnkit.apps.translation.report`)."""
    from attnkit.apps.translation.report import write_report

    return write_report(run_dir, output, n_examples=n_examples)


def serve_run(
    run_dir: Path, *, host: str, port: int, max_chars: int, checkpoint: str,
    open_browser: bool, echo: Callable[[str], None],
) -> None:  # fmt: skip
    """The attention explorer on this run (:mod:`attnkit.apps.translation.explorer`)."""
    from attnkit.apps.translation.explorer import serve

    serve(run_dir, host, port, max_chars, checkpoint, open_browser, echo)
