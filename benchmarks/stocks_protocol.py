"""The alpha_t-RIM paper's protocol (Koenigstein 2023) on its own data, with persistence and
ARIMA beside the networks (issue 17).

For each ticker, input set (``price``: close; ``sentiment``: close + conv_filter), window and
model, and each rolling origin: the series is cut at the origin's end, split 70/20/10, the
network trained on the first 70 % (best epoch by the next 20 %) and scored on the last 10 %
(MAPE and R² per horizon on prices). Origins end at 70, 80, 90 and 100 % of the days, so the
four test blocks do not overlap; the last origin is the paper's own split. Against persistence
each model gets the Diebold-Mariano test on the paper's split and, over the origins, the
Nadeau-Bengio corrected resampled t-test of the MAPE difference.

    python benchmarks/stocks_protocol.py --tickers AMZN --windows 5 10 21 --folds 1 \\
        --out benchmarks/results/stocks-amzn.json       # the paper's AMZN table
    python benchmarks/stocks_protocol.py --tickers AMZN BF_B TMO --windows 5 --folds 4 \\
        --out benchmarks/results/stocks-cv.json         # significance over rolling origins

Work runs in ``--jobs`` processes of one thread each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too

MODELS = {  # model -> (base config, overrides): the paper's chosen sizes
    "alpha_t_rim": ("configs/amzn-alpha-t-rim-paper.yaml", []),
    "rim": ("configs/amzn-alpha-t-rim-paper.yaml", ["model.kind=rim"]),
    "lstm": ("configs/amzn-lstm-paper.yaml", []),
    "rnn": ("configs/amzn-lstm-paper.yaml", ["model.kind=rnn", "model.hidden=160",
                                       "model.dropout=0.5"]),
}  # fmt: skip
INPUTS = {"price": "[close]", "sentiment": "[close, conv_filter]"}


def _config(model: str, ticker: str, inputs: str, window: int, extra: list[str]):
    from attnkit.apps.stocks.config import load_config

    path, overrides = MODELS[model]
    return load_config(
        path,
        [
            *overrides,
            f"data.ticker={ticker}",
            f"data.window={window}",
            f"data.features={INPUTS[inputs]}",
            "train.arima=false",
            *extra,
        ],
    )


def _sets(cfg, fold: int, folds: int):
    from attnkit.apps.stocks.sets import load_series, sets_of

    series, _ = load_series(cfg.data)
    days = round(len(series) * (1 - 0.1 * (folds - 1 - fold)))  # origins end 70..100 %
    return sets_of(series, cfg.data, days=days)


def run_unit(unit: dict) -> dict:
    """Train one (ticker, inputs, window, model, fold) and score it against persistence."""
    import torch

    import attnkit
    from attnkit.apps.stocks.baselines import persistence
    from attnkit.apps.stocks.scoring import forecast, horizon_table
    from attnkit.apps.stocks.training import StocksTask
    from attnkit.engine.trainer import fit
    from attnkit.metrics.forecast import diebold_mariano

    torch.set_num_threads(1)
    cfg = _config(unit["model"], unit["ticker"], unit["inputs"], unit["window"], unit["set"])
    sets = _sets(cfg, unit["fold"], unit["folds"])
    out = Path(unit["runs"]) / "-".join(
        str(unit[k]) for k in ("ticker", "inputs", "window", "model", "fold")
    )
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    result = fit(StocksTask(cfg, sets), out, progress=False)  # the fold's own sets
    model = attnkit.load_run(out).model
    w = sets.windows["test"]
    truth = sets.scaling.prices(w.y)
    pred = sets.scaling.prices(forecast(model, w))
    base = sets.scaling.prices(persistence(w.x, w.y.shape[1]))
    dm = [
        asdict(diebold_mariano(truth[:, h] - pred[:, h], truth[:, h] - base[:, h], h + 1))
        for h in range(truth.shape[1])
    ]
    return {
        **{k: unit[k] for k in ("ticker", "inputs", "window", "model", "fold")},
        "seconds": time.perf_counter() - start,
        "epochs": len(result.history),
        "n_train": sets.n_train,
        "n_test": len(w),
        **horizon_table(truth, pred),
        "persistence": horizon_table(truth, base),
        "dm_vs_persistence": dm,
    }


def run_baselines(unit: dict) -> dict:
    """Persistence and ARIMA on one (ticker, window, fold): they do not depend on the inputs."""
    from attnkit.apps.stocks.scoring import baseline_forecasts, horizon_table

    cfg = _config("lstm", unit["ticker"], "price", unit["window"], unit["set"])
    sets = _sets(cfg, unit["fold"], unit["folds"])
    w = sets.windows["test"]
    truth = sets.scaling.prices(w.y)
    found, order = baseline_forecasts(sets, "test", arima=True)
    return {
        **{k: unit[k] for k in ("ticker", "window", "fold")},
        "n_test": len(w),
        "arima_order": list(order),
        **{
            k: horizon_table(truth, sets.scaling.prices(found[k])) for k in ("persistence", "arima")
        },
    }


def units(args) -> tuple[list[dict], list[dict]]:
    common = {"folds": args.folds, "set": args.set, "runs": str(args.runs)}
    nets, bases = [], []
    for ticker in args.tickers:
        for window in args.windows:
            for fold in range(args.folds):
                bases.append({**common, "ticker": ticker, "window": window, "fold": fold})
                for inputs in args.inputs:
                    for model in args.models:
                        nets.append(
                            {
                                **common,
                                "ticker": ticker,
                                "window": window,
                                "fold": fold,
                                "inputs": inputs,
                                "model": model,
                            }
                        )
    return nets, bases


def _cells(t: dict) -> str:
    return " | ".join(f"{m:.2f} / {r:.2f}" for m, r in zip(t["mape"], t["r2"], strict=True))


def paper_tables(rows: list[dict], bases: list[dict], folds: int) -> list[str]:
    """Markdown: per ticker and window, MAPE % / R² at each horizon on the paper's split (the
    last origin), persistence and ARIMA first; DM against persistence at horizons 1 and 5."""
    last = folds - 1
    lines = []
    for ticker in sorted({r["ticker"] for r in rows}):
        horizons = len(rows[0]["mape"])
        lines += [
            f"### {ticker} (paper split: test = last 10 %)",
            "",
            "| window | inputs | model | "
            + " | ".join(f"h={h + 1}" for h in range(horizons))
            + " | DM h=1 (p) | DM h=5 (p) |",
            "|---" * (horizons + 5) + "|",
        ]
        for b in (b for b in bases if b["ticker"] == ticker and b["fold"] == last):
            for k in ("persistence", "arima"):
                name = k if k == "persistence" else f"ARIMA{tuple(b['arima_order'])}"
                lines.append(f"| {b['window']} | | {name} | {_cells(b[k])} | | |")
            for r in rows:
                if (r["ticker"], r["window"], r["fold"]) != (ticker, b["window"], last):
                    continue
                dm = [
                    f"{d['statistic']:+.2f} ({d['p_value']:.3f})"
                    for d in (r["dm_vs_persistence"][0], r["dm_vs_persistence"][-1])
                ]
                lines.append(
                    f"| {r['window']} | {r['inputs']} | {r['model']} | {_cells(r)} | "
                    f"{dm[0]} | {dm[1]} |"
                )
        lines.append("")
    return lines


def cv_tables(rows: list[dict], folds: int) -> list[str]:
    """Markdown: over the rolling origins, the mean MAPE difference to persistence at horizons
    1 and 5 with the Nadeau-Bengio corrected resampled t-test."""
    from attnkit.metrics.forecast import corrected_resampled_ttest

    if folds < 2:
        return []
    lines = [
        f"### Rolling origins ({folds}): model MAPE - persistence MAPE (points), mean "
        "over origins, Nadeau-Bengio corrected t (p)",
        "",
        "| ticker | window | inputs | model | h=1 | h=5 |",
        "|---|---|---|---|---|---|",
    ]
    keys = sorted({(r["ticker"], r["window"], r["inputs"], r["model"]) for r in rows})
    for key in keys:
        group = [r for r in rows if (r["ticker"], r["window"], r["inputs"], r["model"]) == key]
        cells = []
        for h in (0, -1):
            d = [r["mape"][h] - r["persistence"]["mape"][h] for r in group]
            n_train = float(np.mean([r["n_train"] for r in group]))
            n_test = float(np.mean([r["n_test"] for r in group]))
            t = corrected_resampled_ttest(d, n_train, n_test)
            cells.append(f"{np.mean(d):+.3f} (t {t.statistic:+.2f}, p {t.p_value:.3f})")
        lines.append(f"| {' | '.join(map(str, key))} | {cells[0]} | {cells[1]} |")
    return lines + [""]


def tables(rows: list[dict], bases: list[dict], folds: int) -> list[str]:
    return paper_tables(rows, bases, folds) + cv_tables(rows, folds)


def main(argv: list[str] | None = None) -> None:
    from benchmarks.suites.report import Report, script_command

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickers", nargs="+", default=["AMZN"])
    parser.add_argument("--windows", type=int, nargs="+", default=[5])
    parser.add_argument("--inputs", nargs="+", default=list(INPUTS), choices=list(INPUTS))
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--folds", type=int, default=1, help="rolling origins (1: paper split)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--set", nargs="*", default=[], help="more config overrides")
    parser.add_argument("--runs", type=Path, default=Path("runs/stocks-protocol"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/stocks.json"))
    args = parser.parse_args(argv)
    report = Report(
        "stocks-protocol",
        script_command("benchmarks/stocks_protocol.py", argv),
        {k: str(v) for k, v in vars(args).items()},
    )
    report.options["load_before"] = os.getloadavg()[0]
    nets, bases = units(args)
    print(f"{len(nets)} trainings, {len(bases)} baseline fits, {args.jobs} jobs", flush=True)
    with ProcessPoolExecutor(args.jobs) as pool:
        base_rows = list(pool.map(run_baselines, bases))
        rows = []
        for row in pool.map(run_unit, nets):
            rows.append(row)
            print(
                f"{row['ticker']} {row['inputs']} w{row['window']} {row['model']} fold "
                f"{row['fold']}: MAPE h1 {row['mape'][0]:.3f} (persistence "
                f"{row['persistence']['mape'][0]:.3f}) {row['seconds']:.0f} s",
                flush=True,
            )
    report.options["baselines"] = base_rows
    report.options["runs"] = rows
    report.notes.extend(tables(rows, base_rows, args.folds))
    report.write(args.out)
    print("\n".join(report.notes))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    np.seterr(all="ignore")
    main()
