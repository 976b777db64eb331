"""Hard against soft attention in captioning, with the variance reductions of REINFORCE side by
side (Xu et al. 2015 §4.1; Kool et al. 2019; Jang et al. 2017), on the 32x32 scenes.

    OMP_NUM_THREADS=1 python benchmarks/hard_attention.py [--updates 1200] [--every 100]

Every variant trains on the same scenes for the same number of updates as the soft model
(``configs/scenes-soft-xu.yaml``), validated every ``--every`` updates; one more run gives the
paper's hard model the soft model's measured wall-clock time instead (``train.max_minutes``).
Each variant changes one thing of ``configs/scenes-hard-xu.yaml`` (moving-average baseline,
entropy bonus 0.1, the expectation for half the images):

- no entropy bonus; no expectation trick (always sample);
- 4 samples per image with the leave-one-out baseline;
- a learned baseline;
- Gumbel-softmax (straight-through, temperature annealed from 1 to 0.5) instead of REINFORCE.

With ``--reuse``, runs already trained are read back, not trained again. Prints the validation
table (the best validation row by exact match then BLEU: BLEU, pointing, the step, the
training time), writes ``benchmarks/results/hard-attention.json`` with every validation row and
draws the learning curves (validation BLEU and pointing against updates) of soft, the paper's
hard model and the two best hard variants to ``docs/hard-attention-curves.png``. The paper's hard
model and the best variant (by validation BLEU) are also trained for the soft model's time.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from attnkit.apps.captioning.config import load_experiment
from attnkit.apps.captioning.training import CaptioningTask
from attnkit.engine.trainer import fit

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {  # run directory: (label, config, overrides)
    "soft": ("soft (Xu et al., scenes-soft-xu)", "scenes-soft-xu", []),
    "hard-xu": (
        "hard (Xu et al.: moving baseline, entropy 0.1, expectation half the time)",
        "scenes-hard-xu",
        [],
    ),
    "no-entropy": ("hard, no entropy bonus", "scenes-hard-xu", ["train.entropy=0"]),
    "always-sample": (
        "hard, no expectation trick (always sample)",
        "scenes-hard-xu",
        ["model.hard_expectation=0"],
    ),
    "loo": (
        "hard, 4 samples, leave-one-out baseline",
        "scenes-hard-xu",
        ["train.baseline=loo", "train.samples=4"],
    ),
    "learned": ("hard, learned baseline", "scenes-hard-xu", ["train.baseline=learned"]),
    "gumbel": (
        "hard, Gumbel-softmax, tau 1 -> 0.5",
        "scenes-hard-xu",
        ["model.attention=gumbel", "train.tau_decay=0.001"],
    ),
}


def run(key: str, name: str, config: str, overrides: list[str], args, runs: Path) -> dict:
    budget = [f"train.updates_per_epoch={args.every}", f"train.epochs={args.updates // args.every}"]
    cfg = load_experiment(ROOT / "configs" / f"{config}.yaml", [*budget, *overrides])
    out = runs / key
    if args.reuse and (out / "metrics.json").is_file():  # trained before: read its record
        metrics = json.loads((out / "metrics.json").read_text())
        history = metrics["history"]
        best_row = next(r for r in history if r["epoch"] == metrics["best_epoch"])
        seconds = sum(r["seconds"] for r in history)
    else:
        result = fit(CaptioningTask(cfg), out, progress=False)
        history, best_row, seconds = result.history, result.best, result.seconds
    curve = [{k: r[k] for k in ("step", "valid_bleu", "valid_pointing") if k in r} for r in history]
    keys = ("step", "valid_bleu", "valid_pointing", "valid_exact_match")
    best = {k: best_row[k] for k in keys}
    return dict(
        name=name,
        config=config,
        overrides=overrides,
        seconds=seconds,
        updates=curve[-1]["step"],
        best=best,
        curve=curve,
        run_dir=str(out),
    )


def curves(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    for row in rows:
        steps = [r["step"] for r in row["curve"]]
        for ax, key in zip(axes, ("valid_bleu", "valid_pointing"), strict=True):
            ax.plot(steps, [r[key] for r in row["curve"]], marker="o", ms=3, label=row["name"])
    axes[0].set(xlabel="updates", ylabel="validation BLEU")
    axes[1].set(xlabel="updates", ylabel="validation pointing")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=1200)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--runs", default="runs/hard-attention")
    parser.add_argument("--only", help="comma-separated variant numbers (0 = soft), for tests")
    parser.add_argument("--reuse", action="store_true", help="read runs already trained")
    parser.add_argument("--json", default=str(ROOT / "benchmarks/results/hard-attention.json"))
    parser.add_argument("--picture", default=str(ROOT / "docs/hard-attention-curves.png"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    chosen = list(VARIANTS.items())
    if args.only:
        chosen = [chosen[int(k)] for k in args.only.split(",")]
    rows = [run(key, *variant, args, Path(args.runs)) for key, variant in chosen]
    soft = next((r for r in rows if r["config"] == "scenes-soft-xu"), None)
    hard = [r for r in rows if r["config"] == "scenes-hard-xu"]
    if soft is not None and hard:  # the paper's and the best hard model for soft's time
        budget = [f"train.max_minutes={soft['seconds'] / 60:.4f}", "train.epochs=1000"]
        best = max(hard[1:] or hard, key=lambda r: r["best"]["valid_bleu"])
        for key, r in (("hard-xu-time", hard[0]), ("best-time", best))[: 1 + (best is not hard[0])]:
            name = f"{r['name']}, soft's wall-clock ({soft['seconds']:.0f} s)"
            rows.append(
                run(key, name, "scenes-hard-xu", r["overrides"] + budget, args, Path(args.runs))
            )
    print("\n| variant | updates | train s | valid BLEU | pointing | exact | best step |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        b = r["best"]
        cells = [f"{b['valid_bleu']:.2f}", f"{b['valid_pointing']:.3f}"]
        cells += [f"{b['valid_exact_match']:.3f}", str(b["step"])]
        print(f"| {r['name']} | {r['updates']} | {r['seconds']:.0f} | " + " | ".join(cells) + " |")
    Path(args.json).write_text(json.dumps(dict(rows=rows, args=vars(args)), indent=1) + "\n")
    if args.picture:
        hard = [
            r for r in rows if r["config"] == "scenes-hard-xu" and "wall-clock" not in r["name"]
        ]
        drawn = [r for r in rows if r["config"] == "scenes-soft-xu"] + hard[:1]
        drawn += sorted(hard[1:], key=lambda r: -r["best"]["valid_bleu"])[:2]
        print(curves(drawn, Path(args.picture)))


if __name__ == "__main__":
    main()
