"""``attnkit train | evaluate | predict | report | serve``: one grammar for every application.

``train CONFIG`` reads the config's ``task:``; the others read the run directory's and
dispatch to its :class:`~attnkit.application.App`. Nothing here names an application: a
command or option an application does not take is refused in one line that names the run's
kind and what it takes. The same option means the same thing everywhere: ``-o/--run-dir`` a
run directory, ``--output`` a file written, ``--split valid|test``, ``--json`` the result as
JSON.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from attnkit.cli import Debug, _logging, app, run_or_exit
from attnkit.cli import options as opt
from attnkit.cli.show import echo
from attnkit.commands import Device


def _config_name(config: Path) -> str:
    """The ``name:`` of a config (for the default run directory), else the file's stem."""
    from attnkit.config import ConfigError, read_yaml

    try:
        name = read_yaml(config)[0].get("name")
    except ConfigError:
        return config.stem
    return str(name) if name else config.stem


def _app_of_run(run_dir: Path, command: str):
    """The run's application, or a one-line refusal naming its kind and what it takes."""
    from attnkit.apps import app_of_run

    found = app_of_run(run_dir)
    if not found.supports(command):
        every = ("train", "evaluate", "predict", "report", "serve")
        have = ", ".join(c for c in every if found.supports(c))
        raise ValueError(
            f"{run_dir} is a {found.name} run; `attnkit {command}` does not apply to it "
            f"({found.name} supports: {have})"
        )
    return found


def _refuse_options(found, given: dict, takes: frozenset[str]) -> None:
    """Options that ``found`` does not take, refused in one line."""
    given = {k: v for k, v in given.items() if v is not None and v is not False}  # 0 is given
    extra = [f"--{k.replace('_', '-')}" for k in given if k not in takes]
    if extra:
        raise ValueError(f"{', '.join(extra)}: not taken by {found.name} runs")


@app.command(rich_help_panel="Run")
def train(
    config: Annotated[Path, typer.Argument(help="A config YAML (see configs/).")],
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", "-o", help="Run directory (default runs/NAME).")
    ] = None,
    overrides: opt.Overrides = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue from the run's last checkpoint, with this config's training "
            "settings (each change is logged).",
        ),
    ] = False,
    resume_auto: Annotated[
        bool, typer.Option("--resume-auto", help="Continue if the run has a checkpoint.")
    ] = False,
    resume_exact: Annotated[
        bool,
        typer.Option("--resume-exact", help="Continue, refusing any changed training setting."),
    ] = False,
    device: Device = None,
    json_out: opt.Json = False,
    debug: Debug = False,
) -> None:
    """Train from a config file; its ``task:`` key picks the application (default
    translation)."""
    from attnkit.apps import app_of_config

    made: list[Path] = []  # the run directory, if this command creates it

    def work() -> None:
        if resume + resume_auto + resume_exact > 1:
            raise ValueError("give one of --resume, --resume-auto and --resume-exact")
        chosen = app_of_config(config)
        where = [f"{chosen.device_field}={device}"] if device is not None else []
        cfg = chosen.load_config(config, [*(overrides or ()), *where])  # read once, checked
        out = run_dir or Path("runs") / _config_name(config)
        if not out.exists():  # the highest folder this command creates (-o a/b/c: maybe a)
            top = out
            while not top.parent.exists() and top.parent != top:
                top = top.parent
            made.append(top)
        _logging(out)
        how = "auto" if resume_auto else "exact" if resume_exact else resume
        echo(chosen.train(cfg, out, resume=how, progress=sys.stderr.isatty()), json_out)

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
    run_dir: opt.RunDirArg,
    split: Annotated[
        str | None,
        typer.Option(help="valid or test (train where the run has it); default: its test split."),
    ] = None,
    data_dir: Annotated[str | None, typer.Option(help="Where named data sets live.")] = None,
    beam: opt.Beam = None,
    checkpoint: Annotated[
        str, typer.Option(help="best, averaged or last (runs that keep them).")
    ] = "best",
    bf16: Annotated[
        bool | None,
        typer.Option(
            "--bf16/--no-bf16", help="bfloat16 autocast while decoding (runs that decode)."
        ),
    ] = None,
    output: opt.Output = None,
    src: Annotated[
        Path | None,
        typer.Option(
            help="Your own test inputs: a line each, a folder or list of images (with --ref), "
            "a CSV of series, or a text to score."
        ),
    ] = None,
    ref: Annotated[
        Path | None,
        typer.Option(
            help="Their references, a line each (translations, labels, class names, formulas, "
            "captions), or a folder of masks."
        ),
    ] = None,
    device: Device = None,
    json_out: opt.Json = False,
    debug: Debug = False,
) -> None:
    """Score a run on a split with its application's measures (BLEU and chrF for
    translation, accuracy for classifiers, ...)."""
    from attnkit.application import EvaluateOptions

    def work() -> None:
        _logging(quiet=True)
        found = _app_of_run(run_dir, "evaluate")
        given = {"beam": beam, "checkpoint": checkpoint != "best", "bf16": bf16 is not None}
        given.update(output=output, src=src, ref=ref)
        _refuse_options(found, given, found.evaluate_options)
        paired = "ref" in found.evaluate_options  # else its --src is whole (a CSV of series)
        if (ref is not None and src is None) or (src is not None and ref is None and paired):
            raise ValueError("give --src and --ref together: inputs and their references")
        where = device or "auto"
        split_ = split or found.test_split
        options = EvaluateOptions(split_, data_dir, beam, checkpoint, bf16, output, where, src, ref)
        echo(found.evaluate(run_dir, options), json_out)

    run_or_exit(work, "evaluate", debug)


@app.command(rich_help_panel="Run")
def predict(
    run_dir: opt.RunDirArg,
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Input files: lines of text, images or a CSV, as the run takes. Default: stdin.",
        ),
    ] = None,
    output: opt.Output = None,
    csv: Annotated[
        Path | None, typer.Option(help="The CSV to score (runs that read one; same as INPUTS).")
    ] = None,
    picture: Annotated[
        Path | None,
        typer.Option(help="Also draw where the model attended (runs that draw one)."),
    ] = None,
    beam: opt.Beam = None,
    prompt: opt.Prompt = None,
    max_new: opt.MaxNew = None,
    temperature: opt.Temperature = None,
    top_k: opt.TopK = None,
    top_p: opt.TopP = None,
    seed: opt.Seed = None,
    device: Device = None,
    json_out: opt.Json = False,
    debug: Debug = False,
) -> None:
    """Apply a trained run to new input: translate, classify, caption, segment, read formulas,
    flag anomalies, forecast prices or generate text."""
    from attnkit.application import PredictOptions

    def work() -> None:
        _logging(quiet=True)
        found = _app_of_run(run_dir, "predict")
        generation = opt.sampling(prompt, max_new, temperature, top_k, top_p, seed)
        given = {"picture": picture, "beam": beam, **generation}
        _refuse_options(found, given, found.predict_options)
        if picture is not None and picture.is_dir():
            raise ValueError(f"--picture {picture}: a folder; name the image file to write")
        if csv is not None and not found.csv_input:
            raise ValueError(f"--csv: not taken by {found.name} runs")
        files = [*(inputs or []), *([csv] if csv is not None else [])]
        options = PredictOptions(output, picture, device or "auto", beam, **generation)
        result = found.predict(run_dir, files, options)
        if output is not None:
            lines = result.lines()
            output.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            result.written.insert(0, str(output))
            if not json_out:
                return
        echo(result, json_out)

    run_or_exit(work, "predict", debug)


@app.command(rich_help_panel="Run")
def report(
    run_dir: opt.RunDirArg,
    output: Annotated[
        Path | None, typer.Option("--output", help="HTML file (default RUN_DIR/report.html).")
    ] = None,
    examples: Annotated[int, typer.Option(help="Sample outputs with heatmaps.")] = 3,
    json_out: opt.Json = False,
    debug: Debug = False,
) -> None:
    """Write one self-contained HTML report: config, history, scores, heatmaps."""

    def work() -> None:
        _logging(quiet=True)
        found = _app_of_run(run_dir, "report")
        echo(found.report(run_dir, output or run_dir / "report.html", examples), json_out)

    run_or_exit(work, "report", debug)


@app.command(rich_help_panel="Run")
def serve(
    run_dir: Annotated[Path | None, typer.Argument(help="Run directory (or --hf, --demo)")] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="No model: the lecture's worked examples only.")
    ] = False,
    hf: Annotated[Path | None, typer.Option(help="A local Hugging Face model folder.")] = None,
    max_new: Annotated[int | None, typer.Option(min=1, help="Tokens generated (--hf; 20).")] = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on; 127.0.0.1 keeps it to this machine.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    max_chars: Annotated[int, typer.Option(help="Longest input accepted (characters).")] = 500,
    checkpoint: Annotated[str, typer.Option(help="best, averaged or last.")] = "best",
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default web browser.")
    ] = False,
    device: Device = None,
    debug: Debug = False,
) -> None:
    """Serve the attention explorer, a local web page: run the model on your input and look
    at its attention (heatmap, alignment lines, step by step) beside the worked examples.
    ``--hf MODEL_DIR``: any local Hugging Face model, every layer's and head's attention."""
    from attnkit.application import ServeOptions

    def work() -> None:
        from attnkit.apps import all_apps

        given = [n for n, v in (("RUN_DIR", run_dir), ("--hf", hf), ("--demo", demo)) if v]
        if len(given) != 1:
            both = f"not both: {' and '.join(given)}" if given else "the worked examples"
            raise ValueError(f"give a RUN_DIR to serve, --hf MODEL_DIR or --demo ({both})")
        if max_new is not None and hf is None:
            raise ValueError("--max-new: only with --hf MODEL_DIR (the tokens it generates)")
        _logging(quiet=not debug)  # not into run_dir: that would write a train.log there
        options = ServeOptions(host, port, max_chars, checkpoint, open_browser, device or "auto")
        if hf is not None:
            from attnkit.hf.serve import serve as serve_hf

            return serve_hf(hf, options, typer.echo, max_new)
        if demo:
            (page,) = [a for a in all_apps() if a.serves_demo]
            page.serve(None, options, typer.echo)
            return
        _app_of_run(run_dir, "serve").serve(run_dir, options, typer.echo)

    run_or_exit(work, "serve", debug)
