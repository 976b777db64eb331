"""The stocks pictures checked by their pixels, the HTML report of a RIM and of an LSTM run, and
``predict_csv``: forecasts equal to the run's own, attention weights that sum to 1, the ticker
filter of a ``paper`` run and every bad file named in its error.

Pixels are found through each panel's data-to-pixel transform, recorded when the figure is
saved (as ``tests/interpret/test_heatmap_pixels.py`` does): a pattern drawn transposed, flipped,
shifted in time or shaded on the wrong days fails.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

import attnkit
from attnkit.apps.stocks import views
from attnkit.apps.stocks.predict import predict_csv
from attnkit.apps.stocks.reading import Trace, trace
from attnkit.apps.stocks.report import write_report
from attnkit.apps.stocks.series import StockDataError, read_series, write_csv
from attnkit.apps.stocks.sets import load_sets

TINY = """\
name: tiny-{kind}
task: stocks
data: {{source: generated, days: 400, window: 5, horizon: 2, features: [close, sentiment]}}
model: {{kind: {kind}, cells: 4, active: 2, units: 8, hidden: 16}}
train: {{epochs: 2, arima: false}}
"""


@dataclass
class Picture:
    """A saved PNG ``(H, W, 3)`` in [0, 1], its figure's axes and display-to-PNG scale."""

    png: np.ndarray
    axes: list
    scale: tuple[float, float]

    def pixel(self, ax, x, y) -> tuple[int, int]:
        """The ``(row, column)`` of data point ``(x, y)`` of ``ax``."""
        px, py = ax.transData.transform((x, y))
        return int(round(len(self.png) - py * self.scale[1])), int(round(px * self.scale[0]))

    def at(self, ax, x, y) -> np.ndarray:  # the pixel's (R, G, B)
        return self.png[self.pixel(ax, x, y)]

    def rows(self, ax) -> tuple[float, float]:  # the panel's top and bottom pixel rows
        box = ax.get_window_extent()
        return len(self.png) - box.y1 * self.scale[1], len(self.png) - box.y0 * self.scale[1]


def _render(monkeypatch, plot, *args, **kwargs) -> Picture:
    """Call ``plot`` (which saves one PNG) and read the PNG back with its figure's layout (as
    ``tests/interpret/test_heatmap_pixels.py`` does)."""
    figures, real = [], Figure.savefig

    def savefig(fig, *a, **kw):
        figures.append(fig)
        return real(fig, *a, **kw)

    with monkeypatch.context() as m:
        m.setattr(Figure, "savefig", savefig)
        path = plot(*args, **kwargs)
    png, fig = matplotlib.image.imread(path)[..., :3], figures[0]
    width, height = fig.get_size_inches() * fig.dpi  # display pixels; the PNG is at dpi 110
    return Picture(png, fig.axes, (png.shape[1] / width, png.shape[0] / height))


def _is(pixel, colour, tol: float = 0.03) -> bool:
    return float(np.abs(np.asarray(pixel) - np.asarray(colour)).max()) <= tol


def _write(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _days(n: int) -> np.ndarray:
    """``n`` business days (weekends skipped, so the days are unevenly spaced)."""
    days = np.arange("2020-01-06", "2020-06-01", dtype="datetime64[D]")
    return days[np.is_busday(days)][:n]


def _trace(active: np.ndarray, features: tuple = (0.5, 0.3), comm=None) -> Trace:
    """A trace whose every cell reads ``features`` (null: the rest) on every window."""
    n, k = active.shape
    weights = np.broadcast_to([*features, 1 - sum(features)], (n, k, len(features) + 1))
    comm = np.full((n, k, k), 1 / k) if comm is None else np.broadcast_to(comm, (n, k, k))
    return Trace(active, weights.copy(), comm.copy(), None, np.zeros((n, 2)))


def test_activation_pattern_is_drawn_cell_by_cell_and_day_by_day(monkeypatch, tmp_path):
    n, k, dates = 30, 4, _days(30)
    active = np.zeros((n, k), bool)
    active[:, 1] = True  # cell 1 always, cell 3 only on the second half, 0 and 2 never
    active[n // 2 :, 3] = True
    kw = {"features": ["close", "sentiment"], "prices": np.linspace(10, 12, n)}
    pic = _render(
        monkeypatch, views.plot_activation, _trace(active), dates, tmp_path / "a.png", **kw
    )
    assert len(pic.axes) == 3  # pattern, input attention, price
    pattern, x = pic.axes[0], views.date_numbers(dates)
    for i in range(n):
        for c in range(k):
            want = views.ACTIVE_COLOUR if active[i, c] else views.IDLE_COLOUR
            assert _is(pic.at(pattern, x[i], c), to_rgb(want)), (i, c)
    top, bottom = pic.rows(pattern)
    band = (bottom - top) / k  # cell 0 at the top of the panel, one band of rows per cell
    for i, cells in ((2, [1]), (n - 3, [1, 3])):
        column = pic.png[:, pic.pixel(pattern, x[i], 0)[1]]  # (H, 3)
        dark = np.abs(column - to_rgb(views.ACTIVE_COLOUR)).max(1) < 0.03  # (H,)
        cell = (np.arange(len(column)) + 0.5 - top) / band  # each pixel row's cell (float)
        clear = (np.abs(cell - np.round(cell)) > 1.5 / band) & (cell > 0)  # off the edges
        inside = clear & (cell < k)
        assert (dark[inside] == np.isin(np.floor(cell[inside]), cells)).all(), (i, cells)
        assert not dark[clear & (cell > k)].any()  # nothing as dark in the other panels


def test_shading_covers_exactly_the_days_where_sentiment_matters(monkeypatch, tmp_path):
    n = 30
    matters = np.isin(np.arange(n), [*range(8, 16), 22, 23, 24])
    dates = _days(n)
    trace = _trace(np.ones((n, 2), bool))  # weights 0.5, 0.3, 0.2: lines far below y = 0.92
    pic = _render(
        monkeypatch,
        views.plot_activation,
        trace,
        dates,
        tmp_path / "s.png",
        features=["close", "sentiment"],
        matters=matters,
    )
    assert len(pic.axes) == 2
    shade = 1 - views.SHADE_ALPHA * (1 - np.asarray(to_rgb(views.SHADE)))  # over white
    x = views.date_numbers(dates)
    for i in range(n):
        want = shade if matters[i] else (1.0, 1.0, 1.0)
        assert _is(pic.at(pic.axes[1], x[i], 0.92), want), (i, matters[i])
    assert views.spans(matters) == [(8, 16), (22, 25)]
    x = x[:6]  # Mon..Fri, then Monday after a weekend: edges half-way between the days
    assert np.allclose(np.diff(x), [1, 1, 1, 1, 3])
    assert np.allclose(views.cell_edges(x), [x[0] - 0.5, *(x[:-1] + np.diff(x) / 2), x[-1] + 1.5])


def test_communication_heatmap_rows_are_readers(monkeypatch, tmp_path):
    k = 3
    active = np.tile([True, True, False], (10, 1))  # cell 2 never active: its row stays empty
    comm = np.eye(k)[[1, 2, 0]]  # 0 reads 1, 1 reads 2, (2 would read 0)
    trace = _trace(active, comm=comm)
    pic = _render(monkeypatch, views.plot_communication, trace, tmp_path / "c.png")
    expected = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    for i in range(k):
        for j in range(k):
            grey = float(np.mean(pic.at(pic.axes[0], j - 0.3, i - 0.3)))  # off the value
            assert (grey < 0.4) if expected[i, j] else (grey > 0.9), (i, j, grey)


def test_forecasts_picture_draws_the_chosen_horizon(monkeypatch, tmp_path):
    n, dates = 20, _days(20)
    truth = np.stack([np.full(n, 100.0), 100.0 + np.arange(n)], 1)  # (N, 2)
    model = np.stack([np.full(n, 50.0), np.full(n, 125.0)], 1)  # horizon 1 far off the scale
    pic = _render(
        monkeypatch,
        views.plot_forecasts,
        dates,
        truth,
        {"m": model},
        tmp_path / "f.png",
        horizon_index=1,
    )
    ax, x = pic.axes[0], views.date_numbers(dates)
    assert ax.get_ylim()[0] > 90  # the first horizon's 50 is not drawn

    def near(i, y, colour):  # the line passes within 2 pixels of (x_i, y)
        r, c = pic.pixel(ax, x[i], y)
        patch = pic.png[r - 2 : r + 3, c - 2 : c + 3].reshape(-1, 3)
        return np.abs(patch - to_rgb(colour)).max(1).min() < 0.2  # antialiased: blended

    for i in (3, 10, 16):
        assert near(i, truth[i, 1], views.PRICE_COLOUR)
        assert near(i, 125.0, views.LINE_COLOURS[0])
    with pytest.raises(ValueError, match="horizon_index 2"):
        views.plot_forecasts(dates, truth, {"m": model}, tmp_path / "g.png", horizon_index=2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Tiny alpha_t_rim and lstm runs (2 epochs on 400 generated days), opened."""
    root, out = tmp_path_factory.mktemp("stock-runs"), {}
    for kind in ("alpha_t_rim", "lstm"):
        config = _write(root / f"{kind}.yaml", TINY.format(kind=kind), [])
        out[kind] = attnkit.train(config, root / kind)
    return out


@pytest.fixture(scope="module")
def prices_csv(runs, tmp_path_factory):
    series = load_sets(runs["alpha_t_rim"].config.data).series
    return write_csv(series, tmp_path_factory.mktemp("prices") / "prices.csv")


def test_report_of_a_rim_run(runs, tmp_path):
    run = runs["alpha_t_rim"]
    page = write_report(run, tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    kept = json.loads((Path(run.path) / "metrics.json").read_text())["test"]  # training's table
    for name in ("alpha_t_rim", "persistence"):
        cells = "".join(
            f"<td>{v:.4f}</td>"
            for pair in zip(kept["models"][name]["mape"], kept["models"][name]["r2"], strict=True)
            for v in pair
        )
        assert f"<tr><td>{name}</td>{cells}</tr>" in page
    dm = kept["dm_vs_persistence"]["alpha_t_rim"][1]
    assert f"<td>2</td><td>{dm['statistic']:+.3f}</td><td>{dm['p_value']:.4f}</td>" in page
    images = [base64.b64decode(b) for b in re.findall(r"base64,([A-Za-z0-9+/=]+)", page)]
    assert len(images) == 3 and all(b.startswith(b"\x89PNG") for b in images)
    assert "http" not in page and "<script" not in page and "<link" not in page
    assert "Mean input-attention weight on sentiment" in page and '<tr class="best">' in page
    assert not run.model.training  # left as load_run gave it, for the module's other tests
    sets = load_sets(run.config.data)  # the line's numbers: the days after the windows' last
    w, on = sets.windows["test"], sets.matters[sets.windows["test"].last + 1]
    weight = trace(run.model, w).feature_weights()[on, 1].mean()
    run.model.eval()  # trace leaves it training; the module's other tests forecast with it
    assert f"{weight:.4f} on the {on.sum()} windows where it matters" in page


def test_report_of_an_lstm_run_says_it_records_no_attention(runs, tmp_path):
    page = write_report(runs["lstm"], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<tr><td>lstm</td>" in page and "<tr><td>persistence</td>" in page
    assert "records no attention" in page and "http" not in page
    assert page.count("data:image/png;base64,") == 1  # the forecasts only


def _rows(result) -> tuple[list[str], list[list[str]]]:
    """The columns and rows of predict_csv's Predictions, as the tab-separated lines show."""
    return result.columns, [line.split("\t") for line in result.lines()]


def test_predict_tsv_forecasts_are_the_runs_own(runs, prices_csv):
    run = runs["alpha_t_rim"]
    header, rows = _rows(predict_csv(run, prices_csv))
    assert header == [
        "date",
        "close",
        "forecast_1",
        "forecast_2",
        "weight_close",
        "weight_sentiment",
        "weight_null",
        "active",
    ]
    series = read_series(prices_csv, columns=["close", "sentiment"])
    windows = run.windows(series)
    assert len(rows) == len(windows) == len(series) - 4
    assert [r[0] for r in rows] == [str(d) for d in series.dates[4:]]
    table = np.array([[float(v) for v in r[1:-1]] for r in rows])  # (N, 1 + 2 + 3)
    assert np.allclose(table[:, 0], series.values[4:, 0], rtol=1e-7)
    assert np.allclose(table[:, 1:3], run.predict(windows.x), rtol=1e-6)
    assert np.allclose(table[:, 3:].sum(1), 1.0, atol=1e-5)
    assert all(len(r[-1].split(",")) == 2 for r in rows)  # 2 of the 4 cells active
    assert {int(c) for r in rows for c in r[-1].split(",")} <= {0, 1, 2, 3}


def test_predict_draws_a_picture(runs, prices_csv, tmp_path):
    picture = tmp_path / "act.png"
    result = predict_csv(runs["alpha_t_rim"], prices_csv, picture=picture)
    header, rows = _rows(result)
    assert header[-1] == "active" and len(rows) == 396 and result.written == [str(picture)]
    assert picture.read_bytes().startswith(b"\x89PNG")


def test_predict_lstm_has_no_attention(runs, prices_csv, tmp_path):
    header, rows = _rows(predict_csv(runs["lstm"], prices_csv))
    assert header == ["date", "close", "forecast_1", "forecast_2"] and len(rows) == 396
    with pytest.raises(ValueError, match="lstm model records no attention"):
        predict_csv(runs["lstm"], prices_csv, picture=tmp_path / "p.png")


def test_predict_errors_name_the_file(runs, tmp_path):
    run = runs["alpha_t_rim"]
    days = [str(d) for d in _days(8)]
    no_sentiment = _write(tmp_path / "a.csv", "date,close", [f"{d},10" for d in days])
    with pytest.raises(StockDataError, match="no column 'sentiment'") as err:
        predict_csv(run, no_sentiment)
    assert str(err.value).startswith(str(no_sentiment))
    short = _write(tmp_path / "b.csv", "date,close,sentiment", [f"{d},10,0" for d in days[:4]])
    with pytest.raises(StockDataError, match="4 days; .* at least 5 days") as err:
        predict_csv(run, short)
    assert str(err.value).startswith(str(short))


def test_paper_run_keeps_its_ticker_when_the_file_has_one(runs, tmp_path):
    base = runs["alpha_t_rim"]
    days = [str(d) for d in _days(9)]
    rows = [
        f"{t},{d},{p + i},0.1" for i, d in enumerate(days) for t, p in (("AMZN", 100), ("XYZ", 10))
    ]
    both = _write(tmp_path / "both.csv", "ticker,date,close,sentiment", rows)

    def closes(csv_file: Path, **data) -> list[float]:  # the run as if its data were `data`
        cfg = replace(base.config.data, features=["close", "sentiment"], **data)
        run = replace(base, config=replace(base.config, data=cfg))
        return [float(r[1]) for r in _rows(predict_csv(run, csv_file))[1]]

    assert closes(both, source="paper", ticker="AMZN") == [100.0 + i for i in range(4, 9)]
    one = _write(
        tmp_path / "one.csv",
        "date,close,sentiment",
        [f"{d},{50 + i},0.1" for i, d in enumerate(days)],
    )
    assert len(closes(one, source="paper", ticker="AMZN")) == 5  # no ticker column: every row
    xyz = closes(both, source="csv", path=both, where={"ticker": "XYZ"})
    assert xyz == [10.0 + i for i in range(4, 9)]
