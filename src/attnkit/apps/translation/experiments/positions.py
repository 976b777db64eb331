"""The positions experiment: train short, test long (``attnkit translation experiment positions``).

Transformers that differ only in where word order comes from (:mod:`attnkit.attention.positions`:
absolute sinusoids, Shaw, T5, ALiBi, RoPE, none) are trained on generated sentences of at most
20 English words and tested on 3 to 50 words, as Press et al. 2022 ("Train Short, Test Long")
test extrapolation. BLEU by source length shows which schemes carry over to sentences longer
than any seen in training; the cost table gives parameters, training seconds per epoch and
decoding speed, measured in the same run; the position term of each scheme is drawn per head.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from attnkit.apps.translation.data.corpora import ParallelCorpus, write_corpus
from attnkit.apps.translation.data.generated import generate_pairs
from attnkit.apps.translation.experiments.compare import Compared, compare, packaged_config
from attnkit.attention.positions import POSITIONS

log = logging.getLogger(__name__)

TRAIN_MAX_WORDS, TEST_MAX_WORDS = 20, 50
EDGES = (10, 20, 30, 40, 50)  # BLEU buckets 1-10 .. 41-50 (source words)


@dataclass
class Cost:
    """One scheme's cost, measured in the experiment's own run."""

    name: str
    parameters: int
    seconds_per_epoch: float
    decode_sentences_per_second: float


def length_split_corpus(
    directory: str | Path,
    sizes: tuple[int, int, int] = (10000, 300, 600),
    seed: int = 1,
    train_max: int = TRAIN_MAX_WORDS,
    test_max: int = TEST_MAX_WORDS,
) -> Path:
    """Write the generated corpus with short training text: train and valid of 3 to
    ``train_max`` English words, test of 3 to ``test_max`` (lengths uniform), no source
    sentence in two splits. Returns the directory (``train.en``, ``train.de``, ...)."""
    n_train, n_valid, n_test = sizes
    test = generate_pairs(n_test, seed, split="test", max_len=test_max)
    held = {p.src for p in test}
    valid = generate_pairs(n_valid, seed, split="valid", max_len=train_max, exclude=held)
    held |= {p.src for p in valid}
    train = generate_pairs(n_train, seed, split="train", max_len=train_max, exclude=held)
    splits = {"train": train, "valid": valid, "test": test}
    corpus = ParallelCorpus(f"positions-s{seed}", splits, "en", "de")
    write_corpus(corpus, directory)
    return Path(directory)


def scheme_configs(data_dir: Path, schemes: tuple[str, ...], overrides: tuple[str, ...] = ()):
    """The packaged ``positions.yaml`` once per scheme, reading the corpus in ``data_dir``."""
    _check_schemes(schemes)
    files = [f"data.{split}={data_dir / split}" for split in ("train", "valid", "test")]
    return {
        s: packaged_config(
            "positions", [*files, f"name=positions-{s}", f"model.positions={s}", *overrides]
        )
        for s in schemes
    }


def run_positions(
    out_dir: str | Path,
    schemes: tuple[str, ...] = POSITIONS,
    *,
    overrides: tuple[str, ...] = (),
    sizes: tuple[int, int, int] = (10000, 300, 600),
    reuse: bool = True,
    progress: bool = False,
) -> tuple[list[Compared], list[Cost]]:
    """Write the corpus (once), train and evaluate one Transformer per scheme in
    ``out_dir/SCHEME``; returns the comparisons (BLEU by length) and the costs."""
    _check_schemes(schemes)
    out_dir = Path(out_dir)
    data_dir = out_dir / "data"
    if not (data_dir / "test.de").exists():
        length_split_corpus(data_dir, sizes)
    configs = scheme_configs(data_dir.resolve(), schemes, overrides)
    compared = compare(configs, out_dir, edges=EDGES, progress=progress, reuse=reuse)
    return compared, [_cost(c) for c in compared]


def length_table(compared: list[Compared]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: output words / reference words per source-length bucket and scheme.
    Above 1 the model runs on (repeats, invents); below 1 it stops early (the EOS decision
    that Newman et al. 2020 find to limit length extrapolation)."""
    bounds = [0, *EDGES]
    header = ["source words", *[c.name for c in compared]]
    rows = []
    for low, high in zip(bounds[:-1], bounds[1:], strict=True):
        cells = []
        for c in compared:
            ev = c.evaluation
            index = [
                i for i, t in enumerate(ev.translations) if low < len(t.source.split()) <= high
            ]
            out = sum(len(ev.translations[i].text.split()) for i in index)
            ref = sum(len(ev.references[i].split()) for i in index)
            cells.append(f"{out / ref:.2f}" if ref else "-")
        rows.append([f"{low + 1}-{high}", *cells])
    return header, rows


def _check_schemes(schemes) -> None:
    unknown = [s for s in schemes if s not in POSITIONS]
    if unknown or not schemes:
        raise ValueError(f"unknown position schemes {unknown}; choose from {POSITIONS}")


def _cost(c: Compared) -> Cost:
    epochs = max(c.result.epochs_run, 1)
    sentences = len(c.evaluation.translations)
    speed = sentences / c.decode_seconds if c.decode_seconds else float("nan")
    return Cost(c.name, c.result.n_parameters, c.result.seconds / epochs, speed)


def cost_table(costs: list[Cost]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: parameters, seconds per epoch (and its ratio to ``absolute``), and
    decoding speed (greedy, the test split, one process)."""
    base = next((c.seconds_per_epoch for c in costs if c.name == "absolute"), None)
    header = ["scheme", "parameters", "s / epoch", "vs absolute", "sentences / s (decode)"]
    rows = []
    for c in costs:
        ratio = f"{c.seconds_per_epoch / base:.2f}x" if base else "-"
        speed = f"{c.decode_sentences_per_second:.1f}"
        rows.append([c.name, f"{c.parameters:,}", f"{c.seconds_per_epoch:.1f}", ratio, speed])
    return header, rows
