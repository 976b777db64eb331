"""The ``attnkit`` command line. Thin: it parses options and calls library functions.

Errors are one line on stderr and exit code 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

app = typer.Typer(
    help="attnkit: attention in deep learning, every classic mechanism with its weights.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def main() -> None:
    """attnkit: attention in deep learning, every classic mechanism with its weights."""


def run_or_exit(work: Callable[[], None], command: str, debug: bool) -> None:
    """Run ``work``; turn an expected error into one line on stderr and exit code 2."""
    if debug:
        work()
        return
    from .data.download import DownloadError

    try:
        work()
    except (ValueError, TypeError, OSError, KeyError, DownloadError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"attnkit {command}: error: {message}", file=sys.stderr)
        raise typer.Exit(code=2) from None


@app.command()
def explain(
    example: Annotated[
        str | None,
        typer.Option("--example", "-e", help="Built-in example: two-word or sentence."),
    ] = None,
    vectors: Annotated[
        str | None,
        typer.Option(help="File: JSON (queries/keys/values, or a list) or one vector per line."),
    ] = None,
    vector: Annotated[
        list[str] | None,
        typer.Option(help='One vector, e.g. "0.1,0.2,0.3"; repeat it (self-attention).'),
    ] = None,
    tokens: Annotated[str | None, typer.Option(help='Labels, e.g. "The,cat,sat".')] = None,
    score: Annotated[
        str | None, typer.Option(help="dot or scaled_dot (default: each example's own).")
    ] = None,
    normaliser: Annotated[
        str, typer.Option(help="softmax, sparsemax, entmax15 or hard.")
    ] = "softmax",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON to stdout instead of tables.")
    ] = False,
    cost: Annotated[
        bool, typer.Option("--cost", help="Compare self-attention, recurrent, convolution.")
    ] = False,
    length: Annotated[int, typer.Option(help="Sequence length n for --cost.")] = 1000,
    width: Annotated[int, typer.Option(help="Model width d for --cost.")] = 1000,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Walk through attention step by step: scores, scaling, weights, context.

    Without options: both built-in examples.

    With --vectors or --vector: your vectors (add --example for a built-in too).

    --cost alone prints only the cost table.
    """

    def work() -> None:
        from .attention.cost import layer_costs
        from .interpret import explain as ex

        if vectors is not None and vector:
            raise ValueError("give either --vectors FILE or --vector options, not both")
        walks = []
        if example is not None or not (vectors or vector or cost):
            walks += ex.builtin_examples(example, score, normaliser)
        if vectors is not None or vector:
            inputs = (
                ex.read_vectors(vectors, tokens)
                if vectors is not None
                else ex.parse_vector_options(vector, tokens)
            )
            title = f"Your vectors ({vectors or '--vector'})"
            walks.append(ex.walkthrough(inputs, score or "scaled_dot", normaliser, title))
        report = layer_costs(length, width) if cost else None
        if as_json:
            out: dict = {"walkthroughs": [w.to_dict() for w in walks]}
            if report is not None:
                out["cost"] = report.to_dict()
            typer.echo(json.dumps(out, indent=2))
            return
        console = Console()
        for walk in walks:
            ex.render(walk, console)
        if report is not None:
            console.print(ex.cost_table(report))

    run_or_exit(work, "explain", debug)


def _logging(run_dir: Path | None = None, quiet: bool = False) -> None:
    """INFO to stderr (and to ``run_dir/train.log``)."""
    import logging

    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if run_dir is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(run_dir / "train.log", encoding="utf-8"))
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        datefmt="%H:%M:%S",
        handlers=handlers,
        force=True,
    )


Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]


@app.command()
def train(
    config: Annotated[Path, typer.Argument(help="Experiment YAML (see configs/).")],
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", "-o", help="Output directory (default runs/NAME).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the run's last checkpoint.")] = False,
    debug: Debug = False,
) -> None:
    """Train a translation model from a config file."""

    def work() -> None:
        from .experiment import load_experiment
        from .train.loop import train as train_run

        cfg = load_experiment(config)
        out = run_dir or Path("runs") / cfg.name
        _logging(out)
        result = train_run(cfg, out, resume=resume, progress=sys.stderr.isatty())
        bleu = f", valid BLEU {result.best_bleu:.2f}" if result.best_bleu is not None else ""
        typer.echo(f"{out}: best epoch {result.best_epoch}{bleu} ({result.seconds:.0f} s)")

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
    save_attention: Annotated[
        Path | None, typer.Option(help="Write each sentence's attention (all layers and heads).")
    ] = None,
    interactive: Annotated[bool, typer.Option(help="Prompt for sentences one at a time.")] = False,
    debug: Debug = False,
) -> None:
    """Translate sentences from a file, stdin, or interactively."""

    def work() -> None:
        from dataclasses import replace

        from .interpret.record import save_attention as save
        from .train.rundir import load_run
        from .translation import translate_texts

        cfg, tokenizer, model = load_run(run_dir, checkpoint)
        decode = replace(cfg.decode, n_best=n_best)
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
            from .data.corpora import read_lines

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
    debug: Debug = False,
) -> None:
    """Score a run with sacreBLEU (BLEU, chrF) and BLEU by source length."""

    def work() -> None:
        from rich.table import Table

        from .evaluate.run import evaluate_run

        _logging(quiet=True)
        ev = evaluate_run(run_dir, split, beam_size=beam, checkpoint=checkpoint, data_dir=data_dir)
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
        from .data.download import download

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
        from .experiment import load_experiment
        from .experiments import compare as cmp

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

    from .experiments.compare import bucket_table

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
        from .experiments.demo import run_demo

        _logging()
        run_demo(out, reuse=not retrain, progress=sys.stderr.isatty(), console=Console())

    run_or_exit(work, "demo", debug)


align_app = typer.Typer(help="Word alignments: score them against gold.", no_args_is_help=True)
app.add_typer(align_app, name="align")


@align_app.command("score")
def align_score(
    gold: Annotated[Path, typer.Option(help="Gold Pharaoh file (i-j sure, ipj possible).")],
    pred: Annotated[Path, typer.Option(help="Predicted Pharaoh file.")],
    gold_one_based: Annotated[
        bool, typer.Option("--gold-one-based/--gold-zero-based", help="Gold indices from 1.")
    ] = True,
    pred_one_based: Annotated[
        bool, typer.Option("--pred-one-based/--pred-zero-based", help="Predicted from 1.")
    ] = False,
    debug: Debug = False,
) -> None:
    """AER (Och & Ney 2003), precision and recall of predicted against gold alignments."""

    def work() -> None:
        from .evaluate.alignment import align_score_command

        result = align_score_command(gold, pred, gold_one_based, pred_one_based)
        typer.echo(result.summary())
        for note in result.notes:
            typer.echo(f"note: {note}", err=True)

    run_or_exit(work, "align score", debug)


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A trained run directory.")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="HTML file (default RUN_DIR/report.html).")
    ] = None,
    examples: Annotated[int, typer.Option(help="Sample translations with heatmaps.")] = 3,
    debug: Debug = False,
) -> None:
    """Write one self-contained HTML report: config, history, scores, BLEU by length, heatmaps."""

    def work() -> None:
        from .interpret.report import write_report

        _logging(quiet=True)
        path = write_report(run_dir, out or run_dir / "report.html", n_examples=examples)
        typer.echo(str(path))

    run_or_exit(work, "report", debug)


@app.command()
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
    max_chars: Annotated[int, typer.Option(help="Longest sentence accepted (characters).")] = 500,
    checkpoint: Annotated[str, typer.Option(help="best, averaged or last.")] = "best",
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default web browser.")
    ] = False,
    debug: Debug = False,
) -> None:
    """Serve the attention explorer, a local web page: translate a sentence and look at its
    attention (heatmap, alignment lines, step by step) beside the worked examples. Ctrl-C stops.
    """

    def work() -> None:
        from .explorer import serve as serve_explorer

        if demo and run_dir is not None:
            raise ValueError("give a RUN_DIR or --demo, not both")
        if not demo and run_dir is None:
            raise ValueError("give a RUN_DIR to translate with, or --demo for the worked examples")
        _logging(quiet=not debug)  # not into run_dir: that would write a train.log there
        serve_explorer(run_dir, host, port, max_chars, checkpoint, open_browser, typer.echo)

    run_or_exit(work, "serve", debug)
