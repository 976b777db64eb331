"""Stocks (alpha_t-RIM), declared once: ``attnkit train`` a config with ``task: stocks`` (the
engine fits the forecaster: :class:`~attnkit.apps.stocks.training.StocksTask`), then
``evaluate`` (MAPE and R² per horizon beside persistence and ARIMA, and the Diebold-Mariano
tests), ``predict`` (the forecasts of a CSV's windows with the RIM's input attention, and its
activation pattern with ``--picture``) and ``report`` (one HTML page)."""

from __future__ import annotations

from pathlib import Path

from attnkit.application import App, EvaluateOptions, PredictOptions
from attnkit.results import Predictions, Scores, Shown, Written


class StocksApp(App):
    name = "stocks"
    group = "stocks"
    title = "Stocks (alpha_t-RIM)"
    config_loader = "attnkit.apps.stocks.config:load_config"
    task_class = "attnkit.apps.stocks.training:StocksTask"
    run_loader = "attnkit.apps.stocks.run:open_stocks_run"
    runs = ("evaluate", "predict", "report")
    evaluate_options = frozenset({"src"})  # a CSV of prices, its own targets inside
    predict_options = frozenset({"picture"})
    csv_input = True
    serve_input = "csv"

    def evaluate(self, run_dir: Path, options: EvaluateOptions) -> Scores:
        """MAPE (%) and R² per horizon on prices, persistence and ARIMA beside, and the
        Diebold-Mariano tests against persistence, on ``train``, ``valid`` or ``test``, or on
        every window of one's own CSV (``options.src``: :mod:`~attnkit.apps.stocks.own`)."""
        from dataclasses import replace

        from attnkit.apps.stocks.own import evaluate_csv, warned
        from attnkit.apps.stocks.scoring import as_scores, score_split
        from attnkit.apps.stocks.sets import load_sets

        run = self.open(run_dir, device=options.device)
        if options.src is not None:
            return evaluate_csv(run, options.src)
        data = run.config.data
        if options.data_dir is not None:
            data = replace(data, data_dir=Path(options.data_dir))
        sets = load_sets(data)
        if options.split not in sets.windows:
            raise ValueError(f"no {options.split!r} split; choose one of {', '.join(sets.windows)}")
        kind = run.config.model.kind
        scores = score_split(
            run.model, sets, options.split, name=kind, arima=run.config.train.arima
        )
        out = as_scores(str(run_dir), options.split, scores, kind)
        out.notes = warned(run.outside(sets.windows[options.split].x))  # beyond training
        return out

    def predict(self, run_dir: Path, inputs: list[Path], options: PredictOptions) -> Predictions:
        """The forecasts of every window of one CSV of prices, with a RIM's input attention."""
        from attnkit.apps.stocks.predict import predict_csv

        if len(inputs) != 1:
            raise ValueError(f"give one CSV of prices (--csv FILE), got {len(inputs)} inputs")
        return predict_csv(
            self.open(run_dir, device=options.device), inputs[0], picture=options.picture
        )

    def report(self, run_dir: Path, output: Path, n_examples: int = 3) -> Written:
        """One self-contained HTML page: the table and the attention pictures."""
        from attnkit.apps.stocks.report import write_report

        page = write_report(self.open(run_dir), output)
        return Written(str(run_dir), [str(page)], "report")

    def show(self, run, inputs: list[Path]) -> list[Shown]:
        """Each CSV of prices forecast window by window; a RIM's activation pattern and input
        attention over its days drawn."""
        from attnkit.apps.stocks.predict import read_for_run

        return [windows_shown(run, read_for_run(run, Path(p)), str(p)) for p in inputs]

    def examples(self, run_dir: Path, n: int) -> list[Shown]:
        """The test split cut into ``n`` stretches of consecutive windows, each forecast and
        (a RIM) drawn with its attention."""
        import numpy as np

        from attnkit.apps.stocks.sets import load_sets

        run = self.open(run_dir)
        sets = load_sets(run.config.data)
        last = sets.windows["test"].last  # (N,) each test window's last day
        chunks = [c for c in np.array_split(np.arange(len(last)), max(1, n)) if len(c)]
        dates = sets.series.dates
        return [
            windows_shown(
                run, sets.series, f"test days {dates[last[c[0]]]} to {dates[last[c[-1]]]}", last[c]
            )
            for c in chunks
        ]


def windows_shown(run, series, name: str, days=None) -> Shown:
    """The windows of ``series`` (those ending on ``days`` where given) forecast: the last
    forecast as the output and, for a RIM, the picture of its cells and input attention."""
    import numpy as np

    from attnkit.apps.stocks.reading import trace
    from attnkit.apps.stocks.report import RIM_KINDS
    from attnkit.apps.stocks.views import plot_activation
    from attnkit.apps.stocks.windows import Windows
    from attnkit.interpret.run_report import png_bytes

    w = run.windows(series)
    if days is not None:
        keep = np.isin(w.last, days)
        w = Windows(w.x[keep], w.y[keep], w.last[keep])
    prices = run.predict(w.x)  # (N, horizon)
    ahead = ", ".join(f"{p:.4g}" for p in prices[-1])
    output = f"{len(prices)} windows; after {series.dates[w.last[-1]]}: {ahead}"
    details = {"price": float(series.values[w.last[-1], 0])}
    if run.config.model.kind not in RIM_KINDS:
        return Shown(name, output, details=details)
    tr = trace(run.model, w)
    picture = png_bytes(
        lambda path: plot_activation(
            tr,
            series.dates[w.last],
            path,
            features=series.columns,
            prices=series.values[w.last, 0],
            title=name,
        )
    )
    return Shown(name, output, picture=picture, details=details)


APP = StocksApp()
