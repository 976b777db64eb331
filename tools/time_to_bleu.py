"""Time to a validation BLEU: ``python tools/time_to_bleu.py RUN/metrics.json 35``.

Reads a translation run's per-epoch history (``seconds`` of each epoch, training and
validation together; ``valid_bleu`` greedy) and prints each epoch's cumulative time and BLEU,
then the first epoch that reached the target, or that none did."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str, target: float) -> None:
    metrics = json.loads(Path(path).read_text(encoding="utf-8"))
    total, reached = 0.0, None
    print("epoch  minutes  valid BLEU  device", metrics.get("device", "?"))
    for row in metrics.get("history", []):
        total += row.get("seconds", 0.0)
        bleu = row.get("valid_bleu")
        print(f"{row['epoch']:5d}  {total / 60:7.2f}  {bleu if bleu is None else f'{bleu:10.2f}'}")
        if reached is None and bleu is not None and bleu >= target:
            reached = (row["epoch"], total)
    if reached:
        print(f"time to {target:g} validation BLEU: {reached[1] / 60:.2f} min (epoch {reached[0]})")
    else:
        print(f"{target:g} validation BLEU not reached in {total / 60:.2f} min")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
