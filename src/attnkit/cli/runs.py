"""``attnkit train | evaluate | predict | report | serve``: one grammar for every task.

``train CONFIG`` reads the config's ``task:``; the others read the run directory's. A command
a task does not support is refused in one line naming the task and what it supports
(:func:`attnkit.apps.run_command`). The same option means the same thing everywhere:
``-o/--run-dir`` a run directory, ``--output`` a file written, ``--split valid|test``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from attnkit.cli import Debug, _logging, app, run_or_exit

RunDirArg = Annotated[Path, typer.Argument(help="A trained run directory.")]
Output = Annotated[Path | None, typer.Option("--output", help="Write the result to this file.")]
Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config field: --set train.epochs=2 (repeatable)."),
]


def _config_name(config: Path) -> str:
    """The ``name:`` of a config (for the default run directory), else the file's stem."""
    from attnkit.config import ConfigError, read_yaml

    try:
        name = read_yaml(config)[0].get("name")
    except ConfigError:
        return config.stem
    return str(name) if name else config.stem


@app.command(rich_help_panel="Run")
def train(
    config: Annotated[Path, typer.Argument(help="A config YAML (see configs/).")],
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", "-o", help="Run directory (default runs/NAME).")
    ] = None,
    overrides: Overrides = None,
    resume: Annotated[
        bool,
        typer.Option(
            help="Continue from the run's last checkpoint, with this config's training "
            "settings (each change is logged)."
        ),
    ] = False,
    resume_auto: Annotated[
        bool, typer.Option("--resume-auto", help="Continue if the run has a checkpoint.")
    ] = False,
    resume_exact: Annotated[
        bool,
        typer.Option("--resume-exact", help="Continue, refusing any changed training setting."),
    ] = False,
    debug: Debug = False,
) -> None:
    """Train from a config file; its ``task:`` key picks the task (default translation)."""
    from attnkit.apps import task_module, task_of

    made: list[Path] = []  # the run directory, if this command creates it

    def work() -> None:
        if resume + resume_auto + resume_exact > 1:
            raise ValueError("give one of --resume, --resume-auto and --resume-exact")
        module = task_module(task_of(config))
        cfg = module.load_config(config, overrides or ())  # read once, every field checked
        out = run_dir or Path("runs") / _config_name(config)
        if not out.exists():
            made.append(out)
        _logging(out)
        how = "auto" if resume_auto else "exact" if resume_exact else resume
        typer.echo(module.train_run(cfg, out, resume=how, progress=sys.stderr.isatty()))

    run_or_exit(work, "train", debug, cleanup=lambda: _remove_unfinished(made))


def _remove_unfinished(made: list[Path]) -> None:
    """A run directory this command created and that holds no trained weights yet is removed
    after a failure (nothing of the user's is in it); one with weights (a checkpoint, a finished
    series) is kept for --resume."""
    for out in made:
        if out.is_dir() and not any(out.rglob("*.safetensors")):
            shutil.rmtree(out, ignore_errors=True)


@app.command(rich_help_panel="Run")
def evaluate(
    run_dir: RunDirArg,
    split: Annotated[
        str, typer.Option(help="valid or test (train where the task has it).")
    ] = "test",
    data_dir: Annotated[str | None, typer.Option(help="Where named data sets live.")] = None,
    beam: Annotated[int | None, typer.Option(help="Translation: beam size (1 = greedy).")] = None,
    checkpoint: Annotated[str, typer.Option(help="Translation: best, averaged or last.")] = "best",
    bf16: Annotated[bool | None, typer.Option(help="Translation: bfloat16 autocast.")] = None,
    output: Output = None,
    debug: Debug = False,
) -> None:
    """Score a run on a split with its task's measures (translation: sacreBLEU BLEU and chrF,
    BLEU by source length; classification: accuracy; captioning: BLEU and pointing; ...)."""
    from attnkit.apps import run_command, run_task

    def work() -> None:
        _logging(quiet=True)
        evaluate_run = run_command(run_dir, "evaluate")
        options = {"beam": beam, "checkpoint": checkpoint, "bf16": bf16, "output": output}
        if run_task(run_dir) == "translation":
            typer.echo(evaluate_run(run_dir, split=split, data_dir=data_dir, **options))
            return
        given = [f"--{k}" for k, v in options.items() if v not in (None, "best")]
        if given:
            raise ValueError(f"{', '.join(given)}: only for translation runs")
        typer.echo(evaluate_run(run_dir, split=split, data_dir=data_dir))

    run_or_exit(work, "evaluate", debug)


@app.command(rich_help_panel="Run")
def predict(
    run_dir: RunDirArg,
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Input files (translation, classification: lines of text; vision, "
            "captioning, segmentation, im2latex: images; anomaly detection, stocks: a CSV). "
            "Default: stdin."
        ),
    ] = None,  # fmt: skip
    output: Output = None,
    csv: Annotated[
        Path | None,
        typer.Option(
            help="Stocks, anomaly detection: the CSV to forecast or score (the same "
            "as giving it as INPUTS)."
        ),
    ] = None,  # fmt: skip
    picture: Annotated[
        Path | None,
        typer.Option(
            help="Segmentation: the input, the prediction and each gate's map; "
            "stocks: the RIM's activation pattern and input attention; im2latex: each "
            "token's attention over the formula."
        ),
    ] = None,  # fmt: skip
    debug: Debug = False,
) -> None:
    """Apply a trained run to new input: translate, classify, caption, segment, read formulas,
    flag anomalies or forecast prices."""
    from attnkit.apps import run_command, run_task

    def work() -> None:
        _logging(quiet=True)
        extra, files = {}, list(inputs or [])
        task = run_task(run_dir)
        if picture is not None:
            if task not in ("segmentation", "stocks", "im2latex"):
                raise ValueError(
                    f"--picture: only for segmentation, stocks and im2latex runs, not {task}"
                )
            extra["picture"] = picture
        if csv is not None:
            if task not in ("stocks", "anomaly-detection"):
                raise ValueError(f"--csv: only for stocks and anomaly-detection runs, not {task}")
            files.append(csv)
        predict_run = run_command(run_dir, "predict")
        text = predict_run(run_dir, files, output=output, **extra)
        if text:
            typer.echo(text)

    run_or_exit(work, "predict", debug)


@app.command(rich_help_panel="Run")
def report(
    run_dir: RunDirArg,
    output: Annotated[
        Path | None, typer.Option("--output", help="HTML file (default RUN_DIR/report.html).")
    ] = None,
    examples: Annotated[int, typer.Option(help="Sample outputs with heatmaps.")] = 3,
    debug: Debug = False,
) -> None:
    """Write one self-contained HTML report: config, history, scores, heatmaps."""
    from attnkit.apps import run_command

    def work() -> None:
        _logging(quiet=True)
        write = run_command(run_dir, "report")
        typer.echo(str(write(run_dir, output or run_dir / "report.html", n_examples=examples)))

    run_or_exit(work, "report", debug)


@app.command(rich_help_panel="Run")
def serve(
    run_dir: Annotated[
        Path | None, typer.Argument(help="A trained run directory (leave out with --demo).")
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="No model: the lecture's worked examples only.")
    ] = False,
    host: Annotated[
        str, typer.Option(help="Address to listen on; 127.0.0.1 keeps it to this machine.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    max_chars: Annotated[int, typer.Option(help="Longest input accepted (characters).")] = 500,
    checkpoint: Annotated[str, typer.Option(help="best, averaged or last.")] = "best",
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default web browser.")
    ] = False,
    debug: Debug = False,
) -> None:
    """Serve the attention explorer, a local web page: run the model on your input and look
    at its attention (heatmap, alignment lines, step by step) beside the worked examples."""
    from attnkit.apps import run_command

    def work() -> None:
        if demo and run_dir is not None:
            raise ValueError("give a RUN_DIR or --demo, not both")
        if not demo and run_dir is None:
            raise ValueError("give a RUN_DIR to serve, or --demo for the worked examples")
        _logging(quiet=not debug)  # not into run_dir: that would write a train.log there
        if demo:
            from attnkit.apps.translation.explorer import serve as serve_explorer

            serve_explorer(None, host, port, max_chars, checkpoint, open_browser, typer.echo)
            return
        serve_run = run_command(run_dir, "serve")
        serve_run(run_dir, host=host, port=port, max_chars=max_chars, checkpoint=checkpoint,
                  open_browser=open_browser, echo=typer.echo)  # fmt: skip

    run_or_exit(work, "serve", debug)
