"""Named corpora, resolved from a data directory.

``load_corpus(name, data_dir, langs=...)`` knows

- ``multi30k`` (languages en, de, fr, cs; default ``de-en``): ``{data_dir}/multi30k/task1/raw``;
- ``tatoeba-eng-deu`` (default ``en-de``): ``{data_dir}/tatoeba-eng-deu/deu-eng.zip`` (or
  ``deu.txt``). Tatoeba has no official split, so :func:`split_tatoeba` makes one;
- ``default``: the corpus the project generates itself
  (:mod:`attnkit.apps.translation.data.generated`);
  it needs no data directory;
- any existing directory holding ``{train,valid,test}.{lang}[.gz]`` files;
- several of these joined by ``+`` (``tatoeba-eng-deu+multi30k``): their training splits
  concatenated in that order, the validation and test splits of the **last** one.

The data directory is the ``data_dir`` argument, else the environment variable
``ATTNKIT_DATA_DIR``. :func:`attnkit.apps.translation.data.download.download` writes the same
layout.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

from attnkit.apps.translation.data.cleaning import clean_corpus, whitespace_length
from attnkit.apps.translation.data.corpora import (
    DataError,
    Pair,
    ParallelCorpus,
    read_multi30k,
    read_plain_corpus,
    read_tatoeba,
)

ENV_VAR = "ATTNKIT_DATA_DIR"
NAMES = ("multi30k", "tatoeba-eng-deu", "default")
MULTI30K_LANGS = ("en", "de", "fr", "cs")


def resolve_data_dir(data_dir: str | Path | None = None) -> Path:
    """The data directory: the argument, else ``$ATTNKIT_DATA_DIR``; it must exist."""
    chosen = data_dir if data_dir is not None else os.environ.get(ENV_VAR)
    if not chosen:
        raise DataError(
            f"no data directory: set data.data_dir in the config (or --set data.data_dir=DIR) "
            f"or the environment variable {ENV_VAR}"
        )
    path = Path(chosen).expanduser()
    if not path.is_dir():
        what = "not a directory" if path.exists() else "data directory not found"
        origin = "data.data_dir" if data_dir is not None else ENV_VAR
        raise DataError(f"{path}: {what} (from {origin})")
    return path


def split_tatoeba(
    pairs: list[Pair], *, n_valid: int = 1000, n_test: int = 1000, seed: int = 0
) -> dict[str, list[Pair]]:
    """A deterministic, seeded train/valid/test split that keeps each source sentence whole.

    Tatoeba lists many sentences with several translations ("Hi." -> "Hallo!", "Grüß Gott!").
    Splitting pair by pair would put one translation in training and another in the test set,
    so pairs are grouped by source sentence; the groups are shuffled with ``random.Random(seed)``
    and dealt to test, then valid, skipping any group that would overshoot, so the held-out
    splits have exactly ``n_test`` and ``n_valid`` pairs (single-translation groups fill the
    rest). Everything else is training data, in file order.
    """
    groups: dict[str, list[int]] = {}
    for index, pair in enumerate(pairs):
        groups.setdefault(pair.src, []).append(index)
    order = list(groups.values())
    random.Random(seed).shuffle(order)
    held: dict[str, list[int]] = {"test": [], "valid": []}
    want = {"test": n_test, "valid": n_valid}
    taken: set[int] = set()
    for split in ("test", "valid"):
        for group in order:
            if len(held[split]) == want[split]:
                break
            if group[0] not in taken and len(held[split]) + len(group) <= want[split]:
                held[split].extend(group)
                taken.update(group)
        if len(held[split]) < want[split]:
            raise DataError(f"tatoeba: cannot hold out {want[split]} {split} pairs")
    train = [p for i, p in enumerate(pairs) if i not in taken]
    return {"train": train, **{s: [pairs[i] for i in sorted(held[s])] for s in ("valid", "test")}}


def _langs(langs: str | None, default: str, allowed: tuple[str, ...], name: str) -> list[str]:
    pair = (langs or default).split("-")
    if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(allowed):
        raise DataError(f"{name}: languages {langs!r} not available; use two of {allowed}, a-b")
    return pair


def _tatoeba(root: Path, langs: str | None, seed: int, n_valid: int, n_test: int):
    src, tgt = _langs(langs, "en-de", ("en", "de"), "tatoeba-eng-deu")
    folder = root / "tatoeba-eng-deu"
    candidates = [folder / "deu-eng.zip", folder / "deu.txt"]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise DataError(f"{candidates[0]}: file not found (nor {candidates[1].name})")
    splits = split_tatoeba(read_tatoeba(path), n_valid=n_valid, n_test=n_test, seed=seed)
    corpus = ParallelCorpus("tatoeba-eng-deu", splits, "en", "de")
    return corpus if src == "en" else corpus.swapped()


def load_corpus(
    name: str,
    data_dir: str | Path | None = None,
    *,
    langs: str | None = None,
    max_len: int | None = None,
    length_fn: Callable[[str], int] = whitespace_length,
    seed: int = 0,
    n_valid: int = 1000,
    n_test: int = 1000,
) -> ParallelCorpus:
    """Load a corpus by name (see the module docstring) and clean it.

    Args:
        name: ``multi30k``, ``tatoeba-eng-deu``, ``default`` or a directory of
            ``{split}.{lang}`` files. ``"multi30k:de-en"`` is short for ``langs="de-en"``.
        data_dir: the data directory; default ``$ATTNKIT_DATA_DIR``.
        langs: ``"src-tgt"``, e.g. ``"de-en"``.
        max_len: drop training pairs with a side longer than this (``length_fn`` units).
        seed: the split seed for Tatoeba and the generation seed for ``default``.
        n_valid, n_test: held-out sizes for Tatoeba and ``default``.

    Dropped pairs are counted in the corpus' ``dropped`` dict and logged.
    """
    if ":" in name and langs is None:
        name, langs = name.split(":", 1)
    if "+" in name:
        kw = dict(langs=langs, max_len=max_len, length_fn=length_fn, seed=seed)
        parts = [
            load_corpus(part, data_dir, **kw, n_valid=n_valid, n_test=n_test)
            for part in name.split("+")
        ]
        return _joined(name, parts)
    if name == "default":
        from attnkit.apps.translation.data.generated import DEFAULT_TRAIN, generate_corpus

        if langs not in (None, "en-de", "de-en"):
            raise DataError(f"default: languages {langs!r} not available; use en-de or de-en")
        corpus = generate_corpus(DEFAULT_TRAIN, n_valid, n_test, seed=seed)
        corpus = corpus.swapped() if langs == "de-en" else corpus
    elif name == "multi30k":
        src, tgt = _langs(langs, "de-en", MULTI30K_LANGS, name)
        corpus = read_multi30k(resolve_data_dir(data_dir) / "multi30k", src, tgt)
    elif name == "tatoeba-eng-deu":
        corpus = _tatoeba(resolve_data_dir(data_dir), langs, seed, n_valid, n_test)
    elif Path(name).is_dir():
        if langs is None:
            raise DataError(f"{name}: a corpus directory needs langs='src-tgt'")
        src, tgt = langs.split("-", 1)
        corpus = read_plain_corpus(name, src, tgt)
    else:
        raise DataError(f"unknown corpus {name!r}; known: {', '.join(NAMES)}, or a directory")
    return clean_corpus(corpus, max_len=max_len, length_fn=length_fn)


def _joined(name: str, parts: list[ParallelCorpus]) -> ParallelCorpus:
    """Training splits concatenated; validation and test of the last part (module docstring)."""
    last = parts[-1]
    splits = {split: list(pairs) for split, pairs in last.splits.items()}
    splits["train"] = [pair for part in parts for pair in part.splits.get("train", [])]
    sources = {"train": " + ".join(p.sources.get("train", p.name) for p in parts)}
    sources.update({k: v for k, v in last.sources.items() if k != "train"})
    return ParallelCorpus(name, splits, last.src_lang, last.tgt_lang, sources=sources)
