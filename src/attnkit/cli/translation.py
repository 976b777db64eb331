"""``attnkit train | translate | evaluate | data | experiment | demo``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from attnkit.cli import Debug, _logging, app, run_or_exit


def _config_name(config: Path) -> str:
    """The ``name:`` of a config (for the default run directory), else the file's stem."""
    import yaml

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return config.stem
    name = data.get("name") if isinstance(data, dict) else None
    return str(name) if name else config.stem


@app.command()
def train(
    config: Annotated[Path, typer.Argument(help="Experiment YAML (see configs/).")],
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", "-o", help="Output directory (default runs/NAME).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the run's last checkpoint.")] = False,
    resume_auto: Annotated[
        bool,
        typer.Option(
            "--resume-auto", help="Continue if the run has a checkpoint, else start afresh."
        ),
    ] = False,
    debug: Debug = False,
) -> None:
    """Train a model from a config file; its ``task:`` key picks the task (default translation)."""

    def work() -> None:
        from attnkit.apps import task_module, task_of

        task = task_of(config)
        module = task_module(task)
        out = run_dir or Path("runs") / _config_name(config)
        _logging(out)
        if resume and resume_auto:
            raise ValueError("give --resume or --resume-auto, not both")
        how = "auto" if resume_auto else resume
        if how == "auto" and task != "translation":  # the others resume from checkpoints/last
            how = (out / "checkpoints" / "last").exists()
        summary = module.train_from_config(config, out, resume=how, progress=sys.stderr.isatty())
        typer.echo(summary)

    run_or_exit(work, "train", debug)


@app.command()
def translate(
    run_dir: Annotated[Path, typer.Argument(help="A trained run directory.")],
    input_file: Annotated[
        Path | None, typer.Option("--input", "-i", help="One sentence per line (default: stdin).")
    ] = None,
    beam: Annotated[int | None, typer.Option(help="Beam size (1 = greedy).")] = None,
    n_best: Annotated[int, typer.Option(help="Print this many hypotheses per sentence.")] = 1,
    checkpoint: Annotated[str, typer.Option(help="best, averaged or last.")] = "best",
    bf16: Annotated[
        bool | None, typer.Option(help="bfloat16 autocast (default: the config's decode.bf16).")
    ] = None,
    save_attention: Annotated[
        Path | None, typer.Option(help="Write each sentence's attention (all layers and heads).")
    ] = None,
    interactive: Annotated[bool, typer.Option(help="Prompt for sentences one at a time.")] = False,
    debug: Debug = False,
) -> None:
    """Translate sentences from a file, stdin, or interactively."""

    def work() -> None:
        from dataclasses import replace

        from attnkit.apps.translation.translate import translate_texts
        from attnkit.engine.rundir import load_run
        from attnkit.interpret.record import save_attention as save

        cfg, tokenizer, model = load_run(run_dir, checkpoint)
        decode = replace(cfg.decode, n_best=n_best)
        if bf16 is not None:
            decode = replace(decode, bf16=bf16)
        want_weights = save_attention is not None
        count = 0

        def run(lines: list[str]) -> None:
            nonlocal count
            out = translate_texts(
                model, tokenizer, lines, decode, beam_size=beam, need_weights=want_weights
            )
            for t in out:
                for text, score in zip(t.outputs, t.scores, strict=True):
                    typer.echo(f"{text}\t{score:.4f}" if n_best > 1 else text)
            if want_weights:
                save(out, save_attention, start=count)
            count += len(out)

        if interactive:
            while True:
                try:
                    line = input("> ")
                except EOFError:
                    break
                if line.strip():
                    run([line.strip()])
            return
        if input_file is not None:
            from attnkit.apps.translation.data.corpora import read_lines

            lines = read_lines(input_file)
        else:
            lines = [line.rstrip("\n") for line in sys.stdin]
        run(lines)

    run_or_exit(work, "translate", debug)


@app.command()
def evaluate(
    run_dir: Annotated[Path, typer.Argument(help="A trained run directory.")],
    split: Annotated[str, typer.Option(help="valid or test.")] = "test",
    beam: Annotated[int | None, typer.Option(help="Beam size (1 = greedy).")] = None,
    checkpoint: Annotated[str, typer.Option(help="best, averaged or last.")] = "best",
    data_dir: Annotated[str | None, typer.Option(help="Where named corpora live.")] = None,
    output: Annotated[Path | None, typer.Option(help="Write the translations here.")] = None,
    bf16: Annotated[
        bool | None, typer.Option(help="bfloat16 autocast (default: the config's decode.bf16).")
    ] = None,
    debug: Debug = False,
) -> None:
    """Score a run: translation with sacreBLEU (BLEU, chrF) and BLEU by source length; other
    tasks with their own measures (the run's config names its task)."""

    def work() -> None:
        from rich.table import Table

        from attnkit.apps import task_module, task_of
        from attnkit.apps.translation.evaluate import evaluate_run

        _logging(quiet=True)
        task = task_of(run_dir / "config.yaml") if (run_dir / "config.yaml").is_file() else None
        if task not in (None, "translation"):
            typer.echo(task_module(task).evaluate_run_dir(run_dir, split=split, data_dir=data_dir))
            return
        ev = evaluate_run(
            run_dir, split, beam_size=beam, checkpoint=checkpoint, data_dir=data_dir, bf16=bf16
        )
        console = Console()
        console.print(f"{run_dir} {split} (beam {ev.beam_size}, {ev.scores.n_sentences} sentences)")
        console.print(f"BLEU {ev.scores.bleu:.2f}  {ev.scores.bleu_signature}")
        console.print(f"chrF {ev.scores.chrf:.2f}  {ev.scores.chrf_signature}")
        table = Table("source words", "sentences", "BLEU", title="BLEU by source length")
        for row in ev.by_length:
            table.add_row(row["bucket"], str(row["n"]), f"{row['bleu']:.2f}")
        console.print(table)
        if output is not None:
            output.write_text("".join(t.text + "\n" for t in ev.translations), encoding="utf-8")

    run_or_exit(work, "evaluate", debug)


data_app = typer.Typer(help="Corpora: download the known ones.", no_args_is_help=True)
app.add_typer(data_app, name="data")


@data_app.command("download")
def data_download(
    name: Annotated[str, typer.Argument(help="A known corpus, e.g. multi30k, tatoeba-eng-deu.")],
    to: Annotated[Path, typer.Option("--to", help="Directory to download into.")],
    base_url: Annotated[str | None, typer.Option(help="Mirror to download from.")] = None,
    debug: Debug = False,
) -> None:
    """Download a corpus, verify its sha256 checksums, resume partial files."""

    def work() -> None:
        from attnkit.apps.translation.data.download import download

        paths = download(name, to, base_url=base_url, progress=sys.stderr.isatty())
        for path in paths:
            typer.echo(str(path))

    run_or_exit(work, "data download", debug)


experiment_app = typer.Typer(help="Experiments that compare models.", no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")


@experiment_app.command("bottleneck")
def experiment_bottleneck(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "runs/bottleneck"
    ),
    config: Annotated[
        list[Path] | None,
        typer.Option(help="Configs to compare instead of the built-in three (repeatable)."),
    ] = None,
    retrain: Annotated[bool, typer.Option(help="Train again even if runs exist.")] = False,
    debug: Debug = False,
) -> None:
    """No attention vs Bahdanau vs Transformer, BLEU by source length, and the plot."""

    def work() -> None:
        from attnkit.apps.translation import compare as cmp
        from attnkit.apps.translation.config import load_experiment

        _logging()
        if config:
            cfgs = {load_experiment(p).name: load_experiment(p) for p in config}
        else:
            cfgs = {n: cmp.packaged_config(f"bottleneck-{n}") for n in cmp.BOTTLENECK_MODELS}
        results = cmp.compare(cfgs, out, progress=sys.stderr.isatty(), reuse=not retrain)
        _print_buckets(results)
        typer.echo(f"plot: {cmp.plot_by_length(results, out / 'bleu_by_length.png')}")

    run_or_exit(work, "experiment bottleneck", debug)


def _print_buckets(results) -> None:
    from rich.table import Table

    from attnkit.apps.translation.compare import bucket_table

    header, rows = bucket_table(results)
    table = Table(*header, title="BLEU by source length (test)")
    for row in rows:
        table.add_row(*row)
    Console().print(table)


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("runs/demo"),
    retrain: Annotated[bool, typer.Option(help="Train again even if runs exist.")] = False,
    debug: Debug = False,
) -> None:
    """Train Bahdanau attention and the no-attention baseline on the generated corpus, print
    translations, BLEU and BLEU by length, and write an attention heatmap."""

    def work() -> None:
        from attnkit.apps.translation.demo import run_demo

        _logging()
        run_demo(out, reuse=not retrain, progress=sys.stderr.isatty(), console=Console())

    run_or_exit(work, "demo", debug)
