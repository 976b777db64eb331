"""``attnkit align score``: word alignments against gold."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.cli import Debug, app, run_or_exit

align_app = typer.Typer(help="Word alignments: score them against gold.", no_args_is_help=True)
app.add_typer(align_app, name="align", rich_help_panel="Tools")


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
