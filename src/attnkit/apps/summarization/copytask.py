"""A generated copy task that isolates the pointer (issue 41): each "abstract" names a made-up
system and a number in three sentences, and its summary is the name, a verb and the number::

    source: we study the method of vovoka . it measures 275 cases in all . the results are good .
    target: vovoka measures 275 cases .

Every name is drawn from 1,000 syllable triples and every number from 990, so most appear too
rarely to enter the vocabulary (``data.min_count``): a model can only write them by copying.
A pointer-generator learns it in seconds; a decoder without the pointer writes ``<unk>``.
:func:`write_copy_task` writes ``train.jsonl``, ``dev.jsonl`` and ``test.jsonl`` in SciTLDR's
shape, for ``data.train_path`` and the others."""

from __future__ import annotations

import json
import random
from pathlib import Path

SYLLABLES = ("ka", "lo", "mi", "zu", "re", "ta", "vo", "ne", "pi", "sa")
VERBS = ("reports", "finds", "measures")
THINGS = ("model", "method", "system")


def copy_record(rng: random.Random, paper_id: str) -> dict:
    """One paper of the task: ``paper_id``, ``source`` (three sentences) and ``target``."""
    name = "".join(rng.choice(SYLLABLES) for _ in range(3))
    number, verb = str(rng.randint(10, 999)), rng.choice(VERBS)
    source = [
        f"we study the {rng.choice(THINGS)} of {name} .",
        f"it {verb} {number} cases in all .",
        "the results are good .",
    ]
    return {"paper_id": paper_id, "source": source, "target": [f"{name} {verb} {number} cases ."]}


def write_copy_task(folder: str | Path, sizes=(400, 40, 40), seed: int = 0) -> dict[str, Path]:
    """Write the train, dev and test files of ``sizes`` papers under ``folder``; the paths by
    split name (train, valid, test)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for k, (split, name) in enumerate((("train", "train"), ("valid", "dev"), ("test", "test"))):
        rng = random.Random(seed * 3 + k)
        records = [copy_record(rng, f"{name}-{i}") for i in range(sizes[k])]
        paths[split] = folder / f"{name}.jsonl"
        paths[split].write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return paths
