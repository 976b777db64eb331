"""alpha_t-RIM and its baselines on generated prices where the truth is known (issue 17): the
returns follow yesterday's sentiment inside regimes (about half the days), and nothing
outside them; the news volume (articles per day) is higher on the regime days. Does each
model beat persistence, do sentiment and news volume help, and does the input attention on
sentiment rise on the days where the generator made sentiment matter?

    python benchmarks/stocks_generated.py --seeds 0 1 2 \\
        --out benchmarks/results/stocks-generated.json --figure docs/stocks-activation.png

Each (model, inputs, seed) trains ``configs/stocks-alpha-t-rim.yaml`` with ``model.kind`` and
``data.features`` changed; the oracle is a least-squares line from the last day's sentiment to
the next day's change, fitted on the training windows (what a perfect reader of the
generator's rule would learn without knowing the regimes). The figures: the activation
pattern and input attention of seed 0's alpha_t-RIM for each input set.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script, too

CONFIG = "configs/stocks-alpha-t-rim.yaml"
INPUTS = {
    "price": "[close]",
    "sentiment": "[close, sentiment]",
    "news": "[close, sentiment, articles]",
}
MODELS = ["alpha_t_rim", "rim", "lstm", "rnn"]


def run_one(unit: dict) -> dict:
    """Train one (model, inputs, seed); test MAPE at h=1 against persistence, the DM test, and
    for RIMs the mean weight on sentiment on regime days and on the others."""
    import torch

    import attnkit
    from attnkit.apps.stocks.reading import trace
    from attnkit.apps.stocks.scoring import score_split
    from attnkit.apps.stocks.sets import load_sets

    torch.set_num_threads(1)
    m, inputs, seed = unit["model"], unit["inputs"], unit["seed"]
    overrides = [f"model.kind={m}", f"data.features={INPUTS[inputs]}", f"train.seed={seed}"]
    overrides.append("train.arima=false")
    out = Path(unit["runs"]) / f"{m}-{inputs}-seed{seed}"
    shutil.rmtree(out, ignore_errors=True)
    run = attnkit.train(CONFIG, out, overrides=overrides)
    sets = load_sets(run.config.data)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    scores = score_split(run.model, sets, "test", name=m, arima=False)
    row = {
        **unit,
        "seconds": metrics["train_seconds"],
        "mape": scores["models"][m]["mape"],
        "persistence": scores["models"]["persistence"]["mape"],
        "dm_h1": scores["dm_vs_persistence"][m][0],
    }
    if m in ("alpha_t_rim", "rim") and inputs != "price":
        w = sets.windows["test"]
        weights = trace(run.model, w).feature_weights()[:, 1]  # (N,) on sentiment
        matters = sets.matters[w.last + 1]  # the next day's return follows today's sentiment
        row["sentiment_weight"] = {
            "regime": float(weights[matters].mean()),
            "other": float(weights[~matters].mean()),
        }
    return row


def oracle(seed: int = 0) -> dict:
    """The least-squares sentiment rule's test MAPE at h=1 (see the module docstring)."""
    from attnkit.apps.stocks.config import load_config
    from attnkit.apps.stocks.sets import load_sets
    from attnkit.metrics.forecast import mape

    sets = load_sets(load_config(CONFIG).data)
    tr, te = sets.windows["train"], sets.windows["test"]
    slope = np.polyfit(tr.x[:, -1, 1], tr.y[:, 0] - tr.x[:, -1, 0], 1)
    pred = te.x[:, -1, 0] + np.polyval(slope, te.x[:, -1, 1])
    prices = sets.scaling.prices
    return {
        "oracle": float(mape(prices(te.y[:, 0]), prices(pred))),
        "persistence": float(mape(prices(te.y[:, 0]), prices(te.x[:, -1, 0]))),
    }


def figure(runs: Path, path: Path) -> None:
    import attnkit
    from attnkit.apps.stocks.reading import trace
    from attnkit.apps.stocks.sets import load_sets
    from attnkit.apps.stocks.views import plot_activation

    for inputs in INPUTS:
        run = attnkit.load_run(runs / f"alpha_t_rim-{inputs}-seed0")
        sets = load_sets(run.config.data)
        w = sets.windows["test"]
        plot_activation(
            trace(run.model, w),
            sets.series.dates[w.last],
            path.with_name(f"{path.stem}-{inputs}.png"),
            features=sets.series.columns,
            prices=sets.series.values[w.last, 0],
            matters=sets.matters[w.last + 1],
            title=f"alpha_t-RIM, generated test split, inputs: {inputs}",
        )


def summary(rows: list[dict], base: dict) -> list[str]:
    lines = [
        f"oracle (least squares on yesterday's sentiment) test MAPE h=1 {base['oracle']:.3f}"
        f", persistence {base['persistence']:.3f}"
    ]
    for m in MODELS:
        for inputs in INPUTS:
            group = [r for r in rows if r["model"] == m and r["inputs"] == inputs]
            if not group:
                continue
            h1 = [r["mape"][0] for r in group]
            dm = ", ".join(
                f"{r['dm_h1']['statistic']:+.2f} (p {r['dm_h1']['p_value']:.3f})" for r in group
            )
            line = (
                f"{m} {inputs}: MAPE h=1 {statistics.mean(h1):.3f} "
                f"(seeds {', '.join(f'{v:.3f}' for v in h1)}); DM vs persistence {dm}"
            )
            if "sentiment_weight" in group[0]:
                reg = [r["sentiment_weight"]["regime"] for r in group]
                oth = [r["sentiment_weight"]["other"] for r in group]
                line += (
                    f"; weight on sentiment, regime days {statistics.mean(reg):.3f} vs "
                    f"other days {statistics.mean(oth):.3f}"
                )
            lines.append(line)
    return lines


def main(argv: list[str] | None = None) -> None:
    from benchmarks.suites.report import Report, script_command

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=Path, default=Path("runs/stocks-generated"))
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/stocks-generated.json")
    )
    parser.add_argument("--figure", type=Path, default=Path("docs/stocks-activation.png"))
    args = parser.parse_args(argv)
    report = Report(
        "stocks-generated",
        script_command("benchmarks/stocks_generated.py", argv),
        {k: str(v) for k, v in vars(args).items()},
    )
    report.options["load_before"] = os.getloadavg()[0]
    units = [
        {"model": m, "inputs": i, "seed": s, "runs": str(args.runs)}
        for s in args.seeds
        for m in args.models
        for i in INPUTS
    ]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(run_one, units))
    base = oracle()
    report.options["runs"], report.options["oracle"] = rows, base
    report.notes.extend(summary(rows, base))
    report.write(args.out)
    print("\n".join(report.notes))
    if "alpha_t_rim" in args.models and 0 in args.seeds:
        figure(args.runs, args.figure)
        print(f"wrote {args.figure.with_name(args.figure.stem + '-*.png')}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
