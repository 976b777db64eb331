"""``attnkit detect``: anomaly scores and detections for a CSV (timestamp + value columns)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnkit.cli import Debug, _logging, app, run_or_exit


@app.command()
def detect(
    run_dir: Annotated[Path, typer.Argument(help="A trained anomaly-detection run directory.")],
    csv: Annotated[Path, typer.Option("--csv", help="CSV: a timestamp column + value columns.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write per-row scores and flags here.")
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
        from dataclasses import replace

        from attnkit.apps.anomaly.detector import detect as run_detect
        from attnkit.apps.anomaly.detector import fit_detector
        from attnkit.apps.anomaly.task import load_run_config
        from attnkit.apps.anomaly.timeseries import read_csv
        from attnkit.apps.anomaly.views import explain, plot_explained

        _logging(quiet=True)
        cfg, tuned = load_run_config(run_dir)
        limit = tuned if threshold is None else threshold
        options = {"on_missing": "interpolate", "on_unsorted": "sort", "on_duplicate": "mean"}
        series = read_csv(
            csv,
            timestamp_column=timestamp_column,
            value_columns=cfg.data.value_columns or None,
            **(options if repair else {}),
        )
        for line in series.repairs:
            typer.echo(f"repaired: {line}", err=True)
        detector = replace(cfg.detector, threshold=limit)
        fitted = fit_detector(series.values, detector)
        result = run_detect(fitted, series.values, need_attention=True)
        found = explain(series, result, limit, start=fitted.train_rows)
        ends = explain(series, result, limit, start=fitted.train_rows, at="last")
        typer.echo(
            f"{csv}: {len(series)} rows, trained on the first {fitted.train_rows}, "
            f"threshold {limit:.4g}, {len(found)} anomalies (attention mass inside the flagged "
            "run, at its first and at its last row, vs the run's share of the input)"
        )
        for a, b in zip(found, ends, strict=True):
            typer.echo(
                f"{a.timestamp}\trows {a.span[0]}-{a.span[1]}\tscore {a.score:.4f}\tattention "
                f"inside {a.mass_inside:.2f} (share {a.share:.2f}), at the end "
                f"{b.mass_inside:.2f} (share {b.share:.2f})"
            )
        if output is not None:
            _write(output, series, result, limit, fitted.train_rows)
            typer.echo(f"scores written to {output}")
        if plot is not None and found:
            plot_explained(series, result, ends[0], plot, threshold=limit)
            typer.echo(f"picture written to {plot}")

    run_or_exit(work, "detect", debug)


def _write(path: Path, series, result, threshold: float, train_rows: int) -> None:
    import csv as csv_module

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv_module.writer(handle)
        writer.writerow(["timestamp", *series.columns, "raw_score", "anomaly_score", "anomaly"])
        for t in range(len(series)):
            flag = int(t >= train_rows and result.score[t] >= threshold)
            writer.writerow(
                [
                    str(series.timestamps[t]).replace("T", " "),
                    *(f"{v:.6g}" for v in series.values[t]),
                    f"{result.raw[t]:.6g}",
                    f"{result.score[t]:.6g}",
                    flag,
                ]
            )
