"""From a data configuration to encoded training examples and a trained tokenizer."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from attnkit.apps.translation.config import DataConfig
from attnkit.apps.translation.data import (
    Example,
    ParallelCorpus,
    Tokenizer,
    clean_corpus,
    encode_pairs,
    generate_corpus,
    load_corpus,
    read_parallel,
    train_tokenizer,
)
from attnkit.apps.translation.data.concat import concatenate_pairs
from attnkit.apps.translation.data.corpora import DataError

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    """A cleaned corpus, its tokenizer and the encoded splits."""

    corpus: ParallelCorpus
    tokenizer: Tokenizer
    train: list[Example]
    valid: list[Example]


def load_configured_corpus(cfg: DataConfig) -> ParallelCorpus:
    """The corpus ``cfg`` names, before subword cleaning."""
    if cfg.corpus == "default":
        n_train, n_valid, n_test = cfg.generated_sizes
        corpus = generate_corpus(n_train, n_valid, n_test, seed=cfg.generated_seed)
        return corpus if cfg.src_lang == "en" else corpus.swapped()
    if cfg.corpus == "files":
        splits = {}
        for split in ("train", "valid", "test"):
            prefix = getattr(cfg, split)
            if prefix is None:
                if split == "train":
                    raise DataError(
                        "data.corpus is 'files' but data.train (a path prefix) is unset"
                    )
                continue
            splits[split] = read_parallel(f"{prefix}.{cfg.src_lang}", f"{prefix}.{cfg.tgt_lang}")
        return ParallelCorpus(name=str(cfg.train), splits=splits)
    langs = f"{cfg.src_lang}-{cfg.tgt_lang}"
    return load_corpus(cfg.corpus, cfg.data_dir, langs=langs)


def cleaned_corpus(cfg: DataConfig) -> ParallelCorpus:
    """The corpus ``cfg`` names, empty pairs dropped everywhere, and with ``cfg.concat`` set its
    training pairs joined into longer examples
    (:func:`~attnkit.apps.translation.data.concat.concatenate_pairs`, seeded by
    ``cfg.concat_seed``); validation and test are never joined. These training pairs are what
    a run trains on (before ``max_len``), one alignment line each for guided training."""
    corpus = clean_corpus(load_configured_corpus(cfg))
    if cfg.concat is None:
        return corpus
    train = concatenate_pairs(corpus.train, cfg.concat, cfg.concat_seed)
    log.info(
        "%s/train: %d pairs joined into %d examples of %d-%d sentences",
        corpus.name,
        len(corpus.train),
        len(train),
        *cfg.concat,
    )
    return replace(corpus, splits={**corpus.splits, "train": train})


def prepare(cfg: DataConfig, out_dir: str | Path, tokenizer: Tokenizer | None = None) -> Prepared:
    """Load, train (or reuse) the tokenizer on the training split, clean and encode.

    The corpus is :func:`cleaned_corpus`'s. Pairs longer than ``cfg.max_len`` subwords on
    either side are dropped from the training split only, and counted in the log. No training
    pair left, or a validation split that is given but empty, is a :class:`DataError` naming
    the files and the counts; a corpus with no validation split at all trains without
    validation (the log says so).
    """
    corpus = cleaned_corpus(cfg)  # empty pairs dropped everywhere; training pairs joined
    if "valid" in corpus.splits:
        _refuse_empty(corpus, cfg, "valid", kept=len(corpus.valid))
    if tokenizer is None:
        _refuse_empty(corpus, cfg, "train", kept=len(corpus.train))
        tokenizer = train_tokenizer(
            corpus,
            out_dir,
            vocab_size=cfg.vocab_size,
            model_type=cfg.tokenizer,
            joint=cfg.joint_vocab,
        )
    train = encode_pairs(tokenizer, corpus.train)
    kept = [e for e in train if max(len(e.src), len(e.tgt)) <= cfg.max_len]
    if len(kept) < len(train):
        log.warning(
            "%s/train: dropped %d of %d pairs longer than %d subwords",
            corpus.name,
            len(train) - len(kept),
            len(train),
            cfg.max_len,
        )
    _refuse_empty(corpus, cfg, "train", kept=len(kept), too_long=len(train) - len(kept))
    if "valid" not in corpus.splits:
        log.warning("%s: no validation split: training without validation", corpus.name)
    valid_pairs = corpus.splits.get("valid") or []
    return Prepared(corpus, tokenizer, kept, encode_pairs(tokenizer, valid_pairs))


def _source(cfg: DataConfig, corpus: ParallelCorpus, split: str) -> str:
    """The files (or the named corpus) a split was read from, for messages."""
    if cfg.corpus == "files" and getattr(cfg, split) is not None:
        prefix = getattr(cfg, split)
        return f"{prefix}.{cfg.src_lang} and {prefix}.{cfg.tgt_lang}"
    return f"{corpus.name}/{split}"


def _refuse_empty(
    corpus: ParallelCorpus, cfg: DataConfig, split: str, *, kept: int, too_long: int = 0
) -> None:
    """A :class:`DataError` when ``split`` has no pair left: lines read, dropped and why."""
    if kept > 0:
        return
    counts = corpus.dropped.get(split)
    empty = counts.empty if counts is not None else 0
    read = empty + too_long
    why = f"read {read} lines: {empty} with an empty side"
    if split == "train":
        why += f", {too_long} longer than data.max_len = {cfg.max_len} subwords"
        raise DataError(f"{_source(cfg, corpus, split)}: no training pairs left ({why})")
    raise DataError(
        f"{_source(cfg, corpus, split)}: the validation split is empty ({why}); give a file "
        "with pairs, or leave data.valid unset to train without validation"
    )
