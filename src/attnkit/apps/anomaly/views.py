"""Where an anomaly detector's attention goes: mass inside vs outside the anomaly window, and
the series drawn with the attention over it (cf. Pereira & Silveira 2018, Fig. 6).

``attention[t]`` is row ``t``'s query over its input window, rows ``t - W + 1 .. t`` (see
:func:`attnkit.apps.anomaly.detector.detect`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


def events(flags: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True in ``flags (T,)`` as inclusive ``(first, last)`` rows."""
    edges = np.diff(np.concatenate([[0], np.asarray(flags, dtype=int), [0]]))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    return [(int(a), int(b) - 1) for a, b in zip(starts, ends, strict=True)]


def window_rows(t: int, width: int) -> np.ndarray:
    """The rows of row ``t``'s input window, ``t - W + 1 .. t`` (negative before the start, where
    the first row was repeated)."""
    return np.arange(t - width + 1, t + 1)


def mass_inside(weights: np.ndarray, t: int, span: tuple[int, int]) -> tuple[float, float]:
    """Attention mass of row ``t``'s query on keys inside ``span`` (inclusive rows), and the
    share of the input window that ``span`` covers (what uniform attention would give)."""
    rows = window_rows(t, len(weights))
    inside = (rows >= span[0]) & (rows <= span[1])
    return float(weights[inside].sum()), float(inside.mean())


@dataclass
class ExplainedAnomaly:
    """One detected anomaly: the first flagged row of an event and where its attention went."""

    row: int  # the explained (flagged) row
    timestamp: str
    score: float
    span: tuple[int, int]  # the anomaly window used (labelled when known, else the event)
    labelled: bool
    mass_inside: float
    mass_outside: float
    share: float  # the span's share of the input window


def explain(
    series, detection, threshold: float, start: int = 0, at: str = "first"
) -> list[ExplainedAnomaly]:
    """For each detected event (runs of ``score >= threshold`` from row ``start`` on), the
    attention of one of its flagged rows inside vs outside the anomaly window: the labelled
    window containing the event's first row when there is one, else the detected event itself.

    ``at="first"``: the row that detected the event (for a forecaster its input ends just
    before that row, so at an anomaly's onset nothing anomalous is in view yet); ``at="last"``:
    the event's last flagged row inside the labelled window (the event's last row when
    unlabelled), whose input holds more of the anomaly."""
    if at not in ("first", "last"):
        raise ValueError(f"at={at!r}: choose 'first' or 'last'")
    if detection.attention is None:
        raise ValueError("run detect(..., need_attention=True) to explain detections")
    flags = detection.score >= threshold
    flags[:start] = False
    out = []
    for first, last in events(flags):
        span, labelled = (first, last), False
        for w in series.windows:
            if w[0] <= first <= w[1]:
                span, labelled = w, True
        row = first if at == "first" else (min(last, span[1]) if labelled else last)
        inside, share = mass_inside(detection.attention[row], row, span)
        out.append(
            ExplainedAnomaly(
                row,
                str(series.timestamps[row]),
                float(detection.score[row]),
                span,
                labelled,
                inside,
                1.0 - inside,
                share,
            )
        )
    return out


def plot_explained(
    series,
    detection,
    anomaly: ExplainedAnomaly,
    path: str | Path,
    threshold: float | None = None,
    context: int | None = None,
) -> Path:
    """Draw the series around ``anomaly`` with the attention of its detecting row as bars under
    the curve, the anomaly window shaded, and the score below; save to ``path`` (PNG)."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    weights = detection.attention[anomaly.row]
    width = len(weights)
    context = context or width
    lo = max(anomaly.row - width - context // 2, 0)
    hi = min(max(anomaly.row, anomaly.span[1]) + context // 2, len(series) - 1)
    x = np.arange(lo, hi + 1)
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(9, 4.8), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]}
    )
    values = series.values[lo : hi + 1, 0]
    top.plot(x, values, color="0.2", lw=1.2, label=series.columns[0])
    top.axvspan(
        anomaly.span[0] - 0.5,
        anomaly.span[1] + 0.5,
        color="tab:red",
        alpha=0.12,
        label="anomaly window" if anomaly.labelled else "detected event",
    )
    rows = window_rows(anomaly.row, width)
    keep = rows >= lo
    twin = top.twinx()
    twin.bar(rows[keep], weights[keep], width=1.0, color="tab:blue", alpha=0.45, label="attention")
    twin.set_ylim(0, max(float(weights.max()) * 3.0, 1e-6))
    twin.set_ylabel("attention of the detecting row")
    top.axvline(anomaly.row, color="tab:red", lw=1, ls="--")
    top.set_title(
        f"{series.name}: flagged row {anomaly.timestamp}; its attention inside the window "
        f"{anomaly.mass_inside:.2f} (its share of the input {anomaly.share:.2f})",
        fontsize=9,
    )
    handles = top.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    top.legend(handles=handles, fontsize=8, loc="upper left")
    bottom.plot(x, detection.score[lo : hi + 1], color="tab:purple", lw=1)
    if threshold is not None:
        bottom.axhline(threshold, color="0.4", ls=":", lw=1)
    bottom.set_ylabel("score")
    bottom.set_xlabel("row")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
