"""Where an image-to-LaTeX model looks while it writes (issue 19): does its attention move
across the formula as the tokens are written, and one formula drawn token by token.

For every formula of a split the model reads it greedily with attention recorded, takes each
output step's attention centre (the attention-weighted mean column, in pixels) and measures
Spearman's rank correlation between the step and that column: near 1 when attention moves
left to right as the LaTeX is written (fractions and scripts make it jump back, so not 1).
The picture is the first correctly read formula of at least ``--min-tokens`` tokens. ::

    python benchmarks/im2latex_attention.py runs/im2latex-sample --split real-test \\
        --picture docs/im2latex-attention.png
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from attnkit.apps.im2latex.run import Im2LatexRun
from attnkit.apps.im2latex.sets import load_split
from attnkit.apps.im2latex.views import attention_centres, plot_formula_attention


def movement(maps: np.ndarray, stride: tuple[int, int]) -> float | None:
    """Spearman's rho between output step and attention centre column (None below 3 steps or
    when the centre never moves)."""
    columns = attention_centres(maps, stride)[:, 1]  # (T,)
    if len(columns) < 3 or np.ptp(columns) == 0:
        return None
    return float(spearmanr(np.arange(len(columns)), columns).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--split", default="test")
    parser.add_argument("--picture", type=Path, default=None)
    parser.add_argument("--min-tokens", type=int, default=12)
    parser.add_argument(
        "--out", type=Path, default=None, help="JSON (default RUN/attention-SPLIT.json)"
    )
    args = parser.parse_args()
    run = Im2LatexRun.load(args.run)
    pairs = load_split(run.config.data, args.split)
    readings = run.read(pairs.images, beam=1, attention=True)
    rhos = [movement(r.attention, run.model.stride) for r in readings]
    kept = [r for r in rhos if r is not None]
    row = {
        "split": args.split,
        "n": len(pairs),
        "n_scored": len(kept),
        "median_rho": statistics.median(kept),
        "share_rho_above_0.5": float(np.mean(np.array(kept) > 0.5)),
    }
    if args.picture is not None:
        long_enough = [len(r.tokens) >= args.min_tokens for r in readings]
        correct = [i for i, r in enumerate(readings) if r.tokens == pairs.formulas[i]]
        correct = [i for i in correct if long_enough[i]]
        i = correct[0] if correct else int(np.argmax([len(r.tokens) for r in readings]))
        title = f"{pairs.names[i]} ({'read correctly' if correct else 'misread'})"
        plot_formula_attention(
            pairs.images[i],
            readings[i].tokens,
            readings[i].attention,
            args.picture,
            stride=run.model.stride,
            title=title,
        )
        row.update(
            picture=str(args.picture),
            picture_formula=pairs.names[i],
            picture_rho=rhos[i],
            picture_correct=bool(correct),
        )
    out = args.out or args.run / f"attention-{args.split}.json"
    out.write_text(json.dumps(row, indent=1))
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
