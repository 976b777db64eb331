"""Data for translation: corpora and their readers, the generated default corpus, downloads,
sentencepiece subwords and token-count batches.

The usual path::

    corpus = load_corpus("default")                    # or "multi30k:de-en", "tatoeba-eng-deu"
    tok = train_tokenizer(corpus, run_dir, vocab_size=8000)
    train = encode_pairs(tok, corpus.train)
    for idx in TokenBatchSampler(train, max_tokens=4096, seed=0):
        batch = collate([train[i] for i in idx])       # src, src_mask, tgt_in, tgt_out, ...
"""

from attnkit.apps.translation.data.batching import (
    Batch,
    Example,
    TokenBatchSampler,
    collate,
    encode_pairs,
    encode_sources,
    restore_order,
    sorted_batches,
)
from attnkit.apps.translation.data.cleaning import clean_corpus, clean_pairs
from attnkit.apps.translation.data.corpora import (
    DataError,
    DropCounts,
    Pair,
    ParallelCorpus,
    read_lines,
    read_multi30k,
    read_parallel,
    read_plain_corpus,
    read_tatoeba,
    read_tsv,
    write_corpus,
)
from attnkit.apps.translation.data.download import REGISTRY, DownloadError, download
from attnkit.apps.translation.data.generated import generate_corpus, generate_pairs
from attnkit.apps.translation.data.named import load_corpus, resolve_data_dir, split_tatoeba
from attnkit.apps.translation.data.tokenise import Tokenizer, train_tokenizer

__all__ = [
    "REGISTRY",
    "Batch",
    "DataError",
    "DownloadError",
    "DropCounts",
    "Example",
    "Pair",
    "ParallelCorpus",
    "TokenBatchSampler",
    "Tokenizer",
    "clean_corpus",
    "clean_pairs",
    "collate",
    "download",
    "encode_pairs",
    "encode_sources",
    "generate_corpus",
    "generate_pairs",
    "load_corpus",
    "read_lines",
    "read_multi30k",
    "read_parallel",
    "read_plain_corpus",
    "read_tatoeba",
    "read_tsv",
    "resolve_data_dir",
    "restore_order",
    "sorted_batches",
    "split_tatoeba",
    "train_tokenizer",
    "write_corpus",
]
