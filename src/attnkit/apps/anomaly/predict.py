"""Applying a trained anomaly-detection run to a new CSV (``attnkit anomaly detect`` and
``attnkit predict``): fit the run's detector settings on the CSV's first rows, score every row
causally with the run's threshold, and explain each flagged run by its attention."""

from __future__ import annotations

import csv as csv_module
from dataclasses import dataclass, replace
from pathlib import Path


@dataclass
class CsvDetection:
    """A scored CSV: the series, the fitted detector, the per-row result, the threshold used,
    and each anomaly with its attention at its first and last flagged row."""

    path: Path
    series: object
    fitted: object
    result: object
    threshold: float
    found: list
    ends: list


def detect_csv(
    run_dir: Path,
    csv: Path,
    *,
    threshold: float | None = None,
    timestamp_column: str = "timestamp",
    repair: bool = False,
    device: str | None = None,
) -> CsvDetection:
    """Score ``csv`` with the run's settings (``repair``: interpolate, sort and average
    duplicate times instead of refusing; each repair is recorded in ``series.repairs``);
    ``device`` (default: the run's ``detector.device``) is where the detector is fitted."""
    from attnkit.apps.anomaly import detector as det
    from attnkit.apps.anomaly.run import load_run_config
    from attnkit.apps.anomaly.timeseries import read_csv
    from attnkit.apps.anomaly.views import explain

    cfg, tuned = load_run_config(Path(run_dir))
    limit = tuned if threshold is None else threshold
    options = {"on_missing": "interpolate", "on_unsorted": "sort", "on_duplicate": "mean"}
    columns = cfg.data.value_columns or None
    series = read_csv(
        csv, timestamp_column=timestamp_column, value_columns=columns, **(options if repair else {})
    )
    where = {} if device is None else {"device": str(device)}
    fitted = det.fit_detector(series.values, replace(cfg.detector, threshold=limit, **where))
    result = det.detect(fitted, series.values, need_attention=True)
    found = explain(series, result, limit, start=fitted.train_rows)
    ends = explain(series, result, limit, start=fitted.train_rows, at="last")
    return CsvDetection(Path(csv), series, fitted, result, limit, found, ends)


COLUMNS = [
    "file",
    "timestamp",
    "first_row",
    "last_row",
    "score",
    "attention_inside",
    "share",
    "attention_inside_at_end",
    "share_at_end",
]


def headline(d: CsvDetection) -> str:
    """What was scored: rows, training rows, threshold, anomalies found."""
    return (
        f"{d.path}: {len(d.series)} rows, trained on the first {d.fitted.train_rows}, "
        f"threshold {d.threshold:.4g}, {len(d.found)} anomalies (attention mass inside the "
        "flagged run, at its first and at its last row, vs the run's share of the input)"
    )


def anomaly_rows(d: CsvDetection) -> list[list]:
    """One row per detected anomaly (:data:`COLUMNS`): where, its score, and the attention
    mass inside it at its first and at its last flagged row with the run's share of the
    input window (what uniform attention would give)."""
    return [
        [
            str(d.path),
            str(a.timestamp),
            a.span[0],
            a.span[1],
            a.score,
            a.mass_inside,
            a.share,
            b.mass_inside,
            b.share,
        ]
        for a, b in zip(d.found, d.ends, strict=True)
    ]


def summary_lines(d: CsvDetection) -> list[str]:
    """:func:`headline`, then one line per detected anomaly (``attnkit anomaly detect``)."""
    lines = [headline(d)]
    for _, stamp, first, last, score, inside, share, at_end, end_share in anomaly_rows(d):
        lines.append(
            f"{stamp}\trows {first}-{last}\tscore {score:.4f}\tattention inside {inside:.2f} "
            f"(share {share:.2f}), at the end {at_end:.2f} (share {end_share:.2f})"
        )
    return lines


def write_scores(path: Path, d: CsvDetection) -> None:
    """Per-row scores and flags as CSV (rows inside the training part are never flagged)."""
    series, result, train_rows = d.series, d.result, d.fitted.train_rows
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv_module.writer(handle)
        writer.writerow(["timestamp", *series.columns, "raw_score", "anomaly_score", "anomaly"])
        for t in range(len(series)):
            flag = int(t >= train_rows and result.score[t] >= d.threshold)
            writer.writerow(
                [
                    str(series.timestamps[t]).replace("T", " "),
                    *(f"{v:.6g}" for v in series.values[t]),
                    f"{result.raw[t]:.6g}",
                    f"{result.score[t]:.6g}",
                    flag,
                ]
            )
