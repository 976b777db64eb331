"""Pictures of a stock forecaster: the RIM's activation pattern and input attention over time
(Koenigstein 2023, §5 reads which modules are active, and what they read, as the model's
explanation; Goyal et al. 2019, Fig. 3 draws the same pattern), its mean communication weights,
and the forecasts beside the true prices.

Every picture is a PNG drawn with matplotlib's Agg backend (no display needed). Dates go on the
x axis as they are: a cell of the activation pattern spans from half-way to the previous window
to half-way to the next, so weekends and holidays leave no gaps and no overlaps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnkit.apps.stocks.reading import Trace

ACTIVE_COLOUR, IDLE_COLOUR = "#1b2a49", "#e8edf5"  # the activation pattern: active dark
SHADE, SHADE_ALPHA = "#f2b701", 0.25  # the days where sentiment drives the returns
LINE_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#7f7f7f"]
NULL_COLOUR, PRICE_COLOUR = "0.45", "0.15"


def _pyplot():
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def date_numbers(dates) -> np.ndarray:
    """``dates (N,)`` (``datetime64`` or anything matplotlib reads as dates) as matplotlib's
    day numbers ``(N,)`` float."""
    import matplotlib.dates as mdates

    return np.asarray(mdates.date2num(np.asarray(dates, dtype="datetime64[D]")), dtype=float)


def cell_edges(x: np.ndarray) -> np.ndarray:
    """``(N + 1,)`` edges around the ``(N,)`` increasing centres ``x``: half-way between
    neighbours, and half a step beyond the first and the last (one unit if ``N == 1``)."""
    if len(x) == 1:
        return np.array([x[0] - 0.5, x[0] + 0.5])
    mid = (x[1:] + x[:-1]) / 2
    return np.concatenate([[x[0] - (x[1] - x[0]) / 2], mid, [x[-1] + (x[-1] - x[-2]) / 2]])


def spans(flags: np.ndarray) -> list[tuple[int, int]]:
    """The runs of True in ``flags (N,)`` as ``[start, stop)`` index pairs."""
    padded = np.concatenate([[False], np.asarray(flags, dtype=bool), [False]])
    change = np.flatnonzero(padded[1:] != padded[:-1])
    return [(int(a), int(b)) for a, b in zip(change[::2], change[1::2], strict=True)]


def _date_axis(ax) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(minticks=3, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def plot_activation(
    trace: Trace,
    dates,
    path: str | Path,
    *,
    features: list[str],
    prices: np.ndarray | None = None,
    matters: np.ndarray | None = None,
    title: str = "",
) -> Path:
    """Write a PNG of a RIM over ``N`` windows, one column per window's last day:

    (a) the activation pattern, ``trace.active (N, k)`` as a ``k x N`` image (cell 0 at the
    top, active dark), as Koenigstein (2023, §5) reads it;
    (b) the input-attention weight of each feature and of the null token,
    ``trace.feature_weights() (N, F + 1)`` averaged over the active cells, one line each,
    labelled ``features`` + ``"null"``; the windows where ``matters (N,)`` is True are shaded
    (generated data: the next day's return follows the sentiment there);
    (c) if given, ``prices (N,)``, the price on each window's last day.

    ``dates (N,)`` are the windows' last days, increasing. Returns ``path``.
    """
    weights = trace.feature_weights()  # (N, F + 1)
    n, k = trace.active.shape
    if n == 0:
        raise ValueError("no windows to draw")
    if len(dates) != n or weights.shape[1] != len(features) + 1:
        raise ValueError(
            f"{len(dates)} dates and {len(features)} features do not fit a trace of "
            f"{n} windows with {weights.shape[1] - 1} features"
        )
    plt = _pyplot()
    x = date_numbers(dates)  # (N,)
    edges = cell_edges(x)  # (N + 1,)
    rows = [max(1.0, 0.28 * k), 2.0] + ([1.3] if prices is not None else [])
    fig, axes = plt.subplots(
        len(rows),
        1,
        figsize=(9, 1.2 + sum(rows)),
        sharex=True,
        gridspec_kw={"height_ratios": rows},
        squeeze=False,
    )
    _pattern_panel(axes[0, 0], trace.active, edges)
    _weights_panel(axes[1, 0], x, edges, weights, features, matters)
    if prices is not None:
        bottom = axes[2, 0]
        bottom.plot(x, np.asarray(prices, dtype=float), color=PRICE_COLOUR, lw=1.1)
        bottom.set_ylabel("price")
        bottom.set_title("(c) price on the window's last day", fontsize=9)
    axes[-1, 0].set_xlim(edges[0], edges[-1])
    _date_axis(axes[-1, 0])
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def _pattern_panel(ax, active: np.ndarray, edges: np.ndarray) -> None:
    """``active (N, k)`` as a ``k x N`` two-colour image between the ``(N + 1,)`` x ``edges``."""
    from matplotlib.colors import ListedColormap

    k = active.shape[1]
    cmap = ListedColormap([IDLE_COLOUR, ACTIVE_COLOUR])
    ax.pcolormesh(edges, np.arange(k + 1) - 0.5, active.T.astype(float), cmap=cmap, vmin=0, vmax=1)
    ax.set_ylim(k - 0.5, -0.5)  # cell 0 at the top
    ax.set_yticks(range(k))
    ax.set_ylabel("cell")
    ax.set_title("(a) active cells on each window's last day (dark: active)", fontsize=9)


def _weights_panel(ax, x, edges, weights, features: list[str], matters) -> None:
    """One line per column of ``weights (N, F + 1)`` (the null token last, dashed) over ``x
    (N,)``; the runs of ``matters (N,)`` shaded between their cell ``edges``."""
    if matters is not None:
        for a, b in spans(matters):
            ax.axvspan(edges[a], edges[b], color=SHADE, alpha=SHADE_ALPHA, lw=0)
    for j, name in enumerate([*features, "null"]):
        null = j == len(features)
        colour = NULL_COLOUR if null else LINE_COLOURS[j % len(LINE_COLOURS)]
        ax.plot(x, weights[:, j], color=colour, lw=1.1, ls="--" if null else "-", label=name)
    ax.set_ylim(0, 1)
    ax.set_ylabel("input attention")
    shaded = "; shaded: the next day's return follows sentiment" if matters is not None else ""
    ax.set_title(f"(b) input-attention weight, mean over the active cells{shaded}", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def plot_communication(trace: Trace, path: str | Path, *, title: str = "") -> Path:
    """Write a PNG heatmap of ``trace.comm_mean() (k, k)``: row ``i`` is how much cell ``i``
    read from each cell (columns), averaged over the windows where ``i`` was active (Goyal et
    al. 2019, eq. 4); a row of zeros is a cell never active. Colours run from 0 (white) to 1
    (the weights are softmax rows); the values are written in the cells when ``k <= 8``."""
    comm = trace.comm_mean()  # (k, k)
    k = comm.shape[0]
    plt = _pyplot()
    side = min(2.2 + 0.55 * k, 9.0)
    fig, ax = plt.subplots(figsize=(side + 1.0, side))
    shown = ax.imshow(comm, cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
    if k <= 8:
        for i in range(k):
            for j in range(k):
                colour = "white" if comm[i, j] > 0.5 else "black"
                ax.text(
                    j, i, f"{comm[i, j]:.2f}", ha="center", va="center", fontsize=8, color=colour
                )
    ticks = range(k) if k <= 16 else range(0, k, max(1, k // 8))
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xlabel("read cell")
    ax.set_ylabel("reader cell")
    fig.colorbar(shown, ax=ax, fraction=0.046, pad=0.04, label="mean communication weight")
    ax.set_title(title or "communication between cells", fontsize=9)
    fig.tight_layout()
    return _save(fig, path)


def plot_forecasts(
    dates,
    truth: np.ndarray,
    forecasts: dict[str, np.ndarray],
    path: str | Path,
    *,
    horizon_index: int = 0,
    title: str = "",
) -> Path:
    """Write a PNG of the true prices and each model's forecast ``horizon_index + 1`` days
    ahead. ``dates (N,)``: the windows' last days (the x axis: when the forecast was made);
    ``truth (N, horizon)`` or ``(N,)`` and each ``forecasts[name] (N, horizon)``: prices of the
    following days (the paper's multi-output forecasts, Koenigstein 2023, §4)."""
    truth = np.asarray(truth, dtype=float)
    truth = truth[:, None] if truth.ndim == 1 else truth
    horizon = max([truth.shape[1], *(np.shape(f)[1] for f in forecasts.values())])
    if not 0 <= horizon_index < horizon or truth.shape[1] not in (1, horizon):
        raise ValueError(
            f"horizon_index {horizon_index} is outside the {horizon} horizons (truth {truth.shape})"
        )
    plt = _pyplot()
    x = date_numbers(dates)
    fig, ax = plt.subplots(figsize=(9, 3.4))
    h = horizon_index if truth.shape[1] > 1 else 0
    ax.plot(x, truth[:, h], color=PRICE_COLOUR, lw=1.6, label="true price")
    for j, (name, values) in enumerate(forecasts.items()):
        colour = LINE_COLOURS[j % len(LINE_COLOURS)]
        ax.plot(
            x, np.asarray(values, dtype=float)[:, horizon_index], color=colour, lw=1.1, label=name
        )
    ax.set_xlim(*cell_edges(x)[[0, -1]])
    _date_axis(ax)
    ax.set_xlabel(f"last input day (the price {horizon_index + 1} trading day(s) later)")
    ax.set_ylabel("price")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(title or f"forecasts {horizon_index + 1} day(s) ahead", fontsize=9)
    fig.tight_layout()
    return _save(fig, path)
