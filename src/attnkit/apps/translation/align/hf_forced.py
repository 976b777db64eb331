"""Forced decoding of a pretrained Hugging Face translation model (MarianMT, BART, T5 ...):
its word-level cross-attention on a tokenised parallel file, for
``attnkit translation align extract MODEL_DIR SOURCE TARGET``.

As :mod:`attnkit.apps.translation.align.forced` does for a run, the model is teacher-forced on
the **reference** (Och & Ney 2003; attention read as a soft alignment, Bahdanau et al. 2015):
source and target are tokenised by the model's own tokenizer (``tokenizer(src)``,
``tokenizer(text_target=tgt)``), the decoder is fed the start token and the target's ids, so
row ``k`` of the cross-attention is the step that emits target piece ``k`` and row ``k + 1``
the step that reads it (Shift-Att, Chen et al. 2020, section 3). :func:`attnkit.hf.record`
runs the model under eager attention and strips the padding.

Pieces are merged to the file's words, its whitespace-separated tokens: a fast tokenizer's
character **offsets** say which word a piece covers (:func:`~.forced.word_pooling`, the run
path's pooling); a slow one (Marian's SentencePiece ``MarianTokenizer``) gives its word starts
by its ``▁`` marker (:func:`attnkit.hf.words.marker_word_ids`). Special tokens (EOS, language
codes) belong to no word: their rows and columns are dropped. Source words sum their pieces'
weights, target words average their pieces' rows (Zenkel et al. 2019; Garg et al. 2019).

Shapes: piece level ``(T_pieces + 1, S_pieces)`` (specials included), word level
``(T_words, S_words)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import torch
from torch import Tensor

from attnkit.apps.translation.align.forced import (
    Layer,
    WordMismatchError,
    _word_spans,
    cross_attention,
    detokenize,
    merge_to_words,
    word_pooling,
)


def is_hf_model(path: str | Path) -> bool:
    """A Hugging Face model folder: a ``config.json`` and no attnkit run's ``config.yaml``."""
    path = Path(path)
    return (path / "config.json").is_file() and not (path / "config.yaml").is_file()


def load_hf(path: str | Path):
    """``(model, tokenizer)`` of a Hugging Face encoder-decoder folder, offline, in eval mode.
    Raises ValueError in one line for a folder of another kind of model."""
    try:
        import transformers
    except ImportError:
        raise ImportError(
            "reading a Hugging Face model needs transformers: pip install 'attnkit[hf]'"
        ) from None
    try:
        config = transformers.AutoConfig.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError, KeyError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(f"{path}: not a Hugging Face model folder ({first})") from None
    if not getattr(config, "is_encoder_decoder", False):
        raise ValueError(
            f"{path} holds a {config.model_type} model, not an encoder-decoder: alignments "
            "are read from a translation model's cross-attention (e.g. a MarianMT folder)"
        )
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(path, local_files_only=True)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    return model.eval(), tokenizer


def decoder_layer_count(model) -> int:
    """The number of decoder layers (Marian/BART ``decoder_layers``, T5 ``num_decoder_layers``)."""
    config = model.config
    for name in ("decoder_layers", "num_decoder_layers", "num_hidden_layers"):
        if isinstance(getattr(config, name, None), int):
            return getattr(config, name)
    return 1


def _start_id(model) -> int:
    start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(getattr(model, "generation_config", None), "decoder_start_token_id", None)
    if start is None:
        raise ValueError(f"{type(model).__name__} names no decoder_start_token_id to force from")
    return int(start)


def _marker(tokenizer) -> tuple[str, str]:
    """Where a slow tokenizer's words start (:func:`attnkit.hf.words.word_scheme`); Marian's
    ``MarianTokenizer`` keeps its SentencePiece models as ``spm_source`` / ``spm_target``."""
    from attnkit.hf.words import word_scheme

    try:
        return word_scheme(tokenizer)
    except ValueError:
        if any(getattr(tokenizer, n, None) is not None for n in ("spm_source", "spm_target")):
            return "start", "▁"
        raise


def _pool(tokenizer, enc, n: int, text: str, words: list[str], where: str) -> Tensor:
    """``(P, W)``: each piece of example ``n`` of ``enc`` shared among ``words``; special
    tokens' rows are zero."""
    ids, special = enc["input_ids"][n], enc["special_tokens_mask"][n]
    kept = [p for p in range(len(ids)) if not special[p]]
    pool = torch.zeros(len(ids), len(words), dtype=torch.float64)
    if "offset_mapping" in enc:  # a fast tokenizer: character offsets -> UTF-8 byte offsets
        at = [0]
        for char in text:
            at.append(at[-1] + len(char.encode("utf-8")))
        spans = [enc["offset_mapping"][n][p] for p in kept]
        pieces = [SimpleNamespace(begin=at[b], end=at[e]) for b, e in spans]
        try:
            word_spans = _word_spans(text, words)
        except WordMismatchError as error:
            raise WordMismatchError(f"{where}: {error}") from None
        pool[kept] = word_pooling(pieces, word_spans, where)
        return pool
    how, mark = _marker(tokenizer)
    word_ids, word = [], -1
    for token in tokenizer.convert_ids_to_tokens([ids[p] for p in kept]):
        word += word < 0 or token.startswith(mark) == (how == "start")
        word_ids.append(word)
    if not word_ids or word_ids[-1] + 1 != len(words):
        found = word_ids[-1] + 1 if word_ids else 0
        raise WordMismatchError(
            f"{where}: the tokenizer's pieces make {found} words, the line has {len(words)}"
        )
    pool[kept, word_ids] = 1.0
    return pool


def _encode(tokenizer, pairs, side: int, detok: bool, first: int):
    """Ids and ``(P, W)`` pooling matrices of one side (0 source, 1 target) of ``pairs``."""
    words = [pair[side].split() for pair in pairs]
    texts = [(detokenize if detok else " ".join)(w) for w in words]
    fast = bool(getattr(tokenizer, "is_fast", False))
    if detok and not fast:
        raise ValueError("--detok needs a fast tokenizer (its character offsets)")
    kw = dict(return_special_tokens_mask=True, return_offsets_mapping=fast)
    enc = tokenizer(text_target=texts, **kw) if side else tokenizer(texts, **kw)
    name = "target" if side else "source"
    pools = []
    for n, (text, toks) in enumerate(zip(texts, words, strict=True)):
        where = f"sentence {first + n} ({name} {' '.join(toks)[:60]!r})"
        if not toks:
            raise WordMismatchError(f"{where}: the {name} side is empty")
        pools.append(_pool(tokenizer, enc, n, text, toks, where))
    return [list(ids) for ids in enc["input_ids"]], pools


def _padded(rows: Sequence[Sequence[int]], pad: int) -> tuple[Tensor, Tensor]:
    """Right-padded ``(B, T)`` ids and their ``(B, T)`` mask."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for b, row in enumerate(rows):
        ids[b, : len(row)], mask[b, : len(row)] = torch.tensor(row, dtype=torch.long), 1
    return ids, mask


def forced_piece_attention(model, src_ids, tgt_ids, *, layer: Layer, head, max_tokens: int):
    """Teacher-forced cross-attention ``(len(tgt) + 1, len(src))`` per pair, in input order:
    decoder fed ``[start] + tgt``, so row ``k`` emits ``tgt[k]``; heads and layers chosen by
    :func:`~.forced.cross_attention`. Pairs are batched by length (``max_tokens`` tokens)."""
    from attnkit.hf import record

    pad, start = model.config.pad_token_id or 0, _start_id(model)
    order = sorted(range(len(src_ids)), key=lambda i: (len(src_ids[i]), len(tgt_ids[i])))
    out: dict[int, Tensor] = {}
    while order:
        size = max(1, max_tokens // (len(src_ids[order[-1]]) + len(tgt_ids[order[-1]]) + 1))
        index, order = order[:size], order[size:]
        src, src_mask = _padded([src_ids[i] for i in index], pad)
        dec, dec_mask = _padded([[start, *tgt_ids[i]] for i in index], pad)
        batch = dict(input_ids=src, attention_mask=src_mask)
        batch.update(decoder_input_ids=dec, decoder_attention_mask=dec_mask)
        device = next(model.parameters()).device
        records = record(model, {k: v.to(device) for k, v in batch.items()})
        for i, rec in zip(index, records, strict=True):
            layers = {f"layer{n}.cross": w[None] for n, w in enumerate(rec["cross"])}
            out[i] = cross_attention(layers, layer, head)[0]  # (T_pieces + 1, S_pieces)
    return [out[i] for i in range(len(src_ids))]


def hf_forced_attention(
    model,
    tokenizer,
    pairs: Sequence[tuple[str, str]],
    *,
    layer: Layer = "mean",
    head: int | None = None,
    shift: bool = False,
    detok: bool = False,
    max_tokens: int = 4000,
    first_index: int = 1,
) -> list[Tensor]:
    """Word-level ``(T_words, S_words)`` float64 cross-attention of a Hugging Face
    encoder-decoder teacher-forced on each ``(source, reference)`` pair of whitespace-tokenised
    text: ``layer`` (int, negative from the end, or ``"mean"``), ``head`` (or the heads' mean),
    ``shift`` (Shift-Att, Chen et al. 2020: the row that reads a piece), ``detok`` (feed running
    text; a fast tokenizer's offsets map the pieces back to the tokens)."""
    src_ids, src_pools = _encode(tokenizer, pairs, 0, detok, first_index)
    tgt_ids, tgt_pools = _encode(tokenizer, pairs, 1, detok, first_index)
    raw = forced_piece_attention(
        model, src_ids, tgt_ids, layer=layer, head=head, max_tokens=max_tokens
    )
    return [
        merge_to_words(w, s, t, shift) for w, s, t in zip(raw, src_pools, tgt_pools, strict=True)
    ]
