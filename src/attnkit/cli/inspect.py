"""``attnkit align | report | serve``: looking at what a model attends to."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.cli import Debug, _logging, app, run_or_exit

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
        from attnkit.metrics.aer import align_score_command

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
        from attnkit.apps.translation.report import write_report

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
        from attnkit.apps.translation.explorer import serve as serve_explorer

        if demo and run_dir is not None:
            raise ValueError("give a RUN_DIR or --demo, not both")
        if not demo and run_dir is None:
            raise ValueError("give a RUN_DIR to translate with, or --demo for the worked examples")
        _logging(quiet=not debug)  # not into run_dir: that would write a train.log there
        serve_explorer(run_dir, host, port, max_chars, checkpoint, open_browser, typer.echo)

    run_or_exit(work, "serve", debug)
