"""From a data configuration to encoded training examples and a trained tokenizer."""

from __future__ import annotations

import logging
from dataclasses import dataclass
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


def prepare(cfg: DataConfig, out_dir: str | Path, tokenizer: Tokenizer | None = None) -> Prepared:
    """Load, train (or reuse) the tokenizer on the training split, clean and encode.

    Pairs longer than ``cfg.max_len`` subwords on either side are dropped from the training
    split only, and counted in the log.
    """
    corpus = load_configured_corpus(cfg)
    corpus = clean_corpus(corpus)  # empty pairs, everywhere
    if tokenizer is None:
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
    valid_pairs = corpus.splits.get("valid") or []
    return Prepared(corpus, tokenizer, kept, encode_pairs(tokenizer, valid_pairs))
