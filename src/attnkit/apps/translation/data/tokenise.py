"""Subword tokenisation with sentencepiece (Kudo & Richardson 2018), trained on training data only.

Two segmentation models are available: BPE (Sennrich et al. 2016, "Neural Machine Translation
of Rare Words with Subword Units") and the unigram language model (Kudo 2018, "Subword
Regularization"). Vocabularies are joint (one ``spm.model`` for both sides, which lets a model
tie its embeddings) or separate (``spm.src.model`` and ``spm.tgt.model``).

The special ids are fixed in every model: ``pad=0, unk=1, bos=2, eos=3``. Text is not normalised
(``normalization_rule_name="identity"``) and every character of the training text is kept
(``character_coverage=1.0``), so ``decode(encode(x)) == x`` for text made of seen characters
with single spaces; that keeps detokenised BLEU honest.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import sentencepiece as spm

from attnkit.apps.translation.data.corpora import DataError, Pair, ParallelCorpus

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
JOINT_FILE, SRC_FILE, TGT_FILE = "spm.model", "spm.src.model", "spm.tgt.model"


def _train_model(
    texts: Iterable[str], vocab_size: int, model_type: str, seed: int, **options
) -> bytes:
    """Train one sentencepiece model in memory and return its serialised proto."""
    spm.set_random_generator_seed(seed)
    buffer = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(texts),
            model_writer=buffer,
            vocab_size=vocab_size,
            model_type=model_type,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            hard_vocab_limit=False,  # tiny corpora: the vocabulary may come out smaller
            character_coverage=1.0,
            normalization_rule_name="identity",
            minloglevel=2,  # no log spam
            num_threads=min(4, os.cpu_count() or 1),
            **options,
        )
    except RuntimeError as err:
        raise ValueError(f"sentencepiece training failed: {str(err).strip()}") from None
    return buffer.getvalue()


def train_tokenizer(
    data: ParallelCorpus | Sequence[Pair] | Sequence[tuple[str, str]] | Sequence[str],
    out_dir: str | Path,
    vocab_size: int = 8000,
    model_type: Literal["bpe", "unigram"] = "bpe",
    joint: bool = True,
    *,
    seed: int = 0,
    **options,
) -> Tokenizer:
    """Train subword model(s) and write them to ``out_dir``.

    Args:
        data: a corpus (only its ``train`` split is used), (src, tgt) pairs, or plain texts
            (plain texts need ``joint=True``).
        out_dir: where ``spm.model`` (joint) or ``spm.src.model`` + ``spm.tgt.model`` go.
        vocab_size: the target size per model; a soft limit, so tiny corpora work.
        model_type: ``"bpe"`` or ``"unigram"``.
        joint: one vocabulary for both sides, or one per side.
        options: passed to ``SentencePieceTrainer.train`` (e.g. ``input_sentence_size``).
    """
    if model_type not in ("bpe", "unigram"):
        raise ValueError(f"model_type is {model_type!r}; choose 'bpe' or 'unigram'")
    items = list(data.train if isinstance(data, ParallelCorpus) else data)
    if items and isinstance(items[0], str):
        if not joint:
            raise ValueError("separate vocabularies (joint=False) need (src, tgt) pairs, not texts")
        sides = [[t for t in items if t]]
    else:
        sides = [[p[0] for p in items if p[0]], [p[1] for p in items if p[1]]]
    texts = [t for side in sides for t in side]
    if not texts or (not joint and not all(sides)):
        raise _no_text(data, len(items))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in (JOINT_FILE, SRC_FILE, TGT_FILE):
        (out / stale).unlink(missing_ok=True)
    if joint:
        (out / JOINT_FILE).write_bytes(_train_model(texts, vocab_size, model_type, seed, **options))
    else:
        for side, name in zip(sides, (SRC_FILE, TGT_FILE), strict=True):
            (out / name).write_bytes(_train_model(side, vocab_size, model_type, seed, **options))
    return Tokenizer.load(out)


def _no_text(data: object, n_items: int) -> DataError:
    """The error for training data without text, naming the files of the corpus' train split
    (or the corpus and split) and what was read there."""
    if not isinstance(data, ParallelCorpus):
        return DataError(f"train_tokenizer: no training text ({n_items} items, none with text)")
    source = data.sources.get("train") or f"corpus {data.name!r}, split 'train'"
    d = data.dropped.get("train")
    if d is None:
        return DataError(f"{source}: no training text for the tokenizer ({n_items} pairs)")
    return DataError(
        f"{source}: no training text for the tokenizer ({d.kept + d.empty + d.too_long} pairs "
        f"read, {d.empty} dropped with an empty side, {d.too_long} as too long)"
    )


def _processor(proto: bytes, source: object) -> spm.SentencePieceProcessor:
    try:
        sp = spm.SentencePieceProcessor(model_proto=proto)
    except RuntimeError as err:
        raise DataError(f"{source}: not a sentencepiece model ({str(err).strip()})") from None
    ids = (sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id())
    if ids != (PAD_ID, UNK_ID, BOS_ID, EOS_ID):
        raise DataError(f"{source}: special ids pad/unk/bos/eos are {ids}, expected (0, 1, 2, 3)")
    return sp


class Tokenizer:
    """Source and target sentencepiece models with fixed special ids (pad 0, unk 1, bos 2, eos 3).

    ``encode_*`` return plain subword ids (no bos/eos;
    :func:`attnkit.apps.translation.data.batching.collate`
    adds them to the target). ``decode_tgt`` stops at the first eos and skips pad and bos.
    """

    pad_id, unk_id, bos_id, eos_id = PAD_ID, UNK_ID, BOS_ID, EOS_ID

    def __init__(self, src_proto: bytes, tgt_proto: bytes | None = None, source: object = "<mem>"):
        self.joint = tgt_proto is None
        self._protos = (src_proto, tgt_proto)
        self.src = _processor(src_proto, source)
        self.tgt = self.src if tgt_proto is None else _processor(tgt_proto, source)

    @classmethod
    def load(cls, directory: str | Path) -> Tokenizer:
        """Load ``spm.model`` (joint) or ``spm.src.model`` + ``spm.tgt.model`` from a directory."""
        d = Path(directory)
        if (d / JOINT_FILE).is_file():
            return cls((d / JOINT_FILE).read_bytes(), None, d / JOINT_FILE)
        if (d / SRC_FILE).is_file() and (d / TGT_FILE).is_file():
            return cls((d / SRC_FILE).read_bytes(), (d / TGT_FILE).read_bytes(), d)
        raise DataError(f"{d / JOINT_FILE}: file not found (nor {SRC_FILE} + {TGT_FILE})")

    def save(self, directory: str | Path) -> list[Path]:
        """Write the model file(s) into ``directory`` (e.g. a run directory)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        if self.joint:
            files = {JOINT_FILE: self._protos[0]}
        else:
            files = {SRC_FILE: self._protos[0], TGT_FILE: self._protos[1]}
        for name, proto in files.items():
            (d / name).write_bytes(proto)
        return [d / name for name in files]

    @property
    def src_vocab_size(self) -> int:
        return self.src.get_piece_size()

    @property
    def tgt_vocab_size(self) -> int:
        return self.tgt.get_piece_size()

    def encode_src(self, texts: Sequence[str]) -> list[list[int]]:
        return self.src.encode(list(texts))

    def encode_tgt(self, texts: Sequence[str]) -> list[list[int]]:
        return self.tgt.encode(list(texts))

    def _clean(self, ids: Sequence[int]) -> list[int]:
        ids = [int(i) for i in ids]
        if EOS_ID in ids:
            ids = ids[: ids.index(EOS_ID)]
        return [i for i in ids if i not in (PAD_ID, BOS_ID)]

    def decode_src(self, ids: Sequence[Sequence[int]]) -> list[str]:
        return self.src.decode([self._clean(row) for row in ids])

    def decode_tgt(self, ids: Sequence[Sequence[int]]) -> list[str]:
        return self.tgt.decode([self._clean(row) for row in ids])

    def src_pieces(self, ids: Sequence[int]) -> list[str]:
        """The subword strings of source ids (labels for attention pictures)."""
        return [self.src.id_to_piece(int(i)) for i in ids]

    def tgt_pieces(self, ids: Sequence[int]) -> list[str]:
        return [self.tgt.id_to_piece(int(i)) for i in ids]

    def __repr__(self) -> str:
        kind = "joint" if self.joint else "separate"
        return (
            f"Tokenizer({kind}, src_vocab={self.src_vocab_size}, tgt_vocab={self.tgt_vocab_size})"
        )
