"""Longer than trained (issue 39): location-aware against content-only attention on FSDD digit
strings of 5-7 digits, read three ways, over several seeds, with a picture of the alignments.

For every run: free decoding (beam ``train.beam``: the digit error rate a user gets), decoding
with the digit count given (EOS barred: the model's end-of-sentence prior taken out) and forced
alignment (the true digits fed: the share of digits whose attention peak lies on that digit's
own frames, and where each output position's peak and guess go right), all from
``SpeechRun.evaluate`` and :mod:`attnkit.apps.speech.alignment`. The picture draws, for one
string with a repeated digit, each attention's forced alignment over the frames with the
digits' true frames boxed. ::

    OMP_NUM_THREADS=2 python benchmarks/speech_long.py \\
        --location runs/fsdd-las runs/fsdd-las-s1 runs/fsdd-las-s2 \\
        --content runs/fsdd-las-content runs/fsdd-las-content-s1 runs/fsdd-las-content-s2 \\
        --picture docs/speech-long.png
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

from attnkit.apps.speech.alignment import forced_attention, peak_hits
from attnkit.apps.speech.data import load_split
from attnkit.apps.speech.run import SpeechRun

SCORES = ("der", "fixed_length.der", "forced.alignment_accuracy", "forced.token_accuracy",
          "forced.monotonicity", "monotonicity")  # fmt: skip


def _get(record: dict, key: str):
    for part in key.split("."):
        record = record[part]
    return record


def by_position(run: SpeechRun, found, ids) -> dict:
    """Forced alignment per output position: share of right guesses and of peaks on the
    digit's own frames."""
    forced = forced_attention(run.model, found.features, ids)
    right: dict[int, list] = {}
    hits: dict[int, list] = {}
    for (guess, weights), t, spans in zip(forced, ids, found.spans, strict=True):
        for p, hit in enumerate(peak_hits(weights, spans, run.model.reduction)):
            right.setdefault(p + 1, []).append(bool(guess[p] == t[p]))
            hits.setdefault(p + 1, []).append(hit)
    return {
        "token_accuracy": {p: float(np.mean(v)) for p, v in sorted(right.items())},
        "peak_on_digit": {p: float(np.mean(v)) for p, v in sorted(hits.items())},
    }


def score(path: Path, split: str) -> dict:
    run = SpeechRun.load(path)
    record = run.evaluate(split)
    found = load_split(run.config.data, split)
    ids = [run.vocab.encode(text)[1:-1] for text in found.texts]
    row = {key: _get(record, key) for key in SCORES}
    row["lengths_written"] = statistics.mean(
        len(p["prediction"].split()) for p in record["predictions"]
    )
    return {"run": str(path), **row, "by_position": by_position(run, found, ids)}


def summary(rows: list[dict]) -> dict:
    """Mean, lowest and highest of each score over seeds."""
    out = {}
    for key in (*SCORES, "lengths_written"):
        values = [r[key] for r in rows]
        out[key] = {"mean": statistics.mean(values), "min": min(values), "max": max(values)}
    return out


def picture(location: Path, content: Path, split: str, path: Path) -> str:
    """The forced alignment of both runs on the first string with a run of one digit."""
    from attnkit.runtime import files_backend

    files_backend()
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from attnkit.apps.speech.views import on_frames

    runs = [SpeechRun.load(location), SpeechRun.load(content)]
    found = load_split(runs[0].config.data, split)
    pick = next(
        i
        for i, t in enumerate(found.texts)
        if any(a == b for a, b in zip(t.split(), t.split()[1:], strict=False))
    )
    ids = [runs[0].vocab.encode(found.texts[pick])[1:-1]]
    fig, axes = plt.subplots(2, 1, figsize=(8, 4.6), sharex=True)
    for ax, run, name in zip(axes, runs, ("location-aware", "content-only"), strict=True):
        ((_, weights),) = forced_attention(run.model, [found.features[pick]], ids)
        digits = found.texts[pick].split()
        heat = on_frames(weights[: len(digits)], run.model.reduction, len(found.features[pick]))
        ax.imshow(heat, aspect="auto", cmap="Greys", vmin=0, vmax=float(heat.max()))
        for row, (start, end) in enumerate(found.spans[pick]):  # the digit's true frames
            ax.add_patch(
                Rectangle((start - 0.5, row - 0.5), end - start, 1, fill=False, ec="tab:red", lw=1)
            )
        ax.set_yticks(range(len(digits)), digits, fontsize=8)
        ax.set_ylabel(f"{name}\ndigit written", fontsize=8)
    axes[-1].set_xlabel("frame (10 ms); red: where each digit was spoken")
    fig.suptitle(
        f"forced alignment of '{found.texts[pick]}' ({split}; trained on 1-3 digits)", fontsize=9
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return found.names[pick]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--location", type=Path, nargs="+", required=True)
    parser.add_argument("--content", type=Path, nargs="+", required=True)
    parser.add_argument("--split", default="test-long")
    parser.add_argument("--picture", type=Path, default=None)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/speech-fsdd-long.json")
    )
    args = parser.parse_args()
    result = {"split": args.split}
    for name in ("location", "content"):
        rows = [score(p, args.split) for p in getattr(args, name)]
        result[name] = {"summary": summary(rows), "runs": rows}
        print(name, json.dumps(result[name]["summary"], indent=None))
        for r in rows:
            print(" ", r["run"], json.dumps(r["by_position"]))
    if args.picture is not None:
        result["picture"] = {
            "path": str(args.picture),
            "utterance": picture(args.location[0], args.content[0], args.split, args.picture),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
