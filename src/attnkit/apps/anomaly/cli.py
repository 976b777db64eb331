"""``attnkit anomaly detect``: anomaly scores and detections for a CSV (timestamp + value
columns), with the per-row scores and a picture; ``attnkit predict`` gives the anomalies alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.commands import Debug, run_or_exit
from attnkit.commands import setup_logging as _logging

commands = typer.Typer()  # gathered into `attnkit` by attnkit.cli


@commands.command(rich_help_panel="Anomaly detection")
def detect(
    run_dir: Annotated[Path, typer.Argument(help="A trained anomaly-detection run directory.")],
    csv: Annotated[Path, typer.Option("--csv", help="CSV: a timestamp column + value columns.")],
    output: Annotated[
        Path | None, typer.Option("--output", help="Write per-row scores and flags here.")
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(help="Draw the first detection with its last flagged row's attention (PNG)."),
    ] = None,
    threshold: Annotated[
        float | None, typer.Option(help="Override the run's tuned threshold.")
    ] = None,
    timestamp_column: Annotated[str, typer.Option(help="The timestamp column.")] = "timestamp",
    repair: Annotated[
        bool,
        typer.Option(
            help="Interpolate missing values, sort rows and average duplicate times "
            "(each repair is reported) instead of stopping with an error."
        ),
    ] = False,
    debug: Debug = False,
) -> None:
    """Fit the run's detector on the CSV's first rows, score every row causally and print the
    detected anomalies with the attention mass inside each (see docs/anomaly.md)."""

    def work() -> None:
        from attnkit.apps import require_kind
        from attnkit.apps.anomaly.app import APP
        from attnkit.apps.anomaly.predict import detect_csv, summary_lines, write_scores
        from attnkit.apps.anomaly.views import plot_explained

        require_kind(run_dir, APP.name)
        _logging(quiet=True)
        d = detect_csv(
            run_dir, csv, threshold=threshold, timestamp_column=timestamp_column, repair=repair
        )
        for line in d.series.repairs:
            typer.echo(f"repaired: {line}", err=True)
        typer.echo("\n".join(summary_lines(d)))
        if output is not None:
            write_scores(output, d)
            typer.echo(f"scores written to {output}")
        if plot is not None and d.found:
            plot_explained(d.series, d.result, d.ends[0], plot, threshold=d.threshold)
            typer.echo(f"picture written to {plot}")

    run_or_exit(work, "anomaly detect", debug)
