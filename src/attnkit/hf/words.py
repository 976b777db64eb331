"""Sub-word tokens to words for any Hugging Face tokenizer, and attention merged to words.

Where a word starts:

1. a fast tokenizer's own ``BatchEncoding.word_ids(i)`` (what the tokenizer call returned),
   the exact answer for WordPiece, BPE and SentencePiece alike;
2. otherwise (``generate()`` outputs, plain id tensors) the tokenizer's marker, read from its
   ``tokenizer.json``: WordPiece's continuing prefix (``##``: such a piece continues a word),
   SentencePiece's ``▁`` (Metaspace) or byte-level BPE's ``Ġ`` (GPT-2: such a piece starts a
   word).

Special tokens (``[CLS]``, ``</s>``, ...) are words of their own. Attention is merged as
:func:`attnkit.interpret.pieces.merge_subwords` merges pieces (Zenkel et al.
2019; Garg et al. 2019): a key word receives the **sum** of its pieces' weights (the attention
paid to the word), a query word's row is the **mean** of its pieces' rows, so every row that was
a distribution stays one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import torch
from torch import Tensor

from attnkit.interpret.pieces import merge_by_word_ids

MARKERS = {"Metaspace": "▁", "ByteLevel": "Ġ"}  # pre-tokenizer type -> word-start mark


def _find_types(node, found: list[str]) -> None:
    if isinstance(node, dict):
        if node.get("type") in MARKERS:
            found.append(node["type"])
        for value in node.values():
            _find_types(value, found)
    elif isinstance(node, list):
        for value in node:
            _find_types(value, found)


def word_scheme(tokenizer) -> tuple[str, str]:
    """``("continue", "##")`` for WordPiece, ``("start", "▁" | "Ġ")`` for SentencePiece and
    byte-level BPE. Raises ValueError for a tokenizer that says neither."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        spec = json.loads(backend.to_str())
        prefix = (spec.get("model") or {}).get("continuing_subword_prefix")
        if prefix:
            return "continue", prefix
        found: list[str] = []
        _find_types([spec.get("pre_tokenizer"), spec.get("decoder")], found)
        if found:
            return "start", MARKERS[found[0]]
    if any(getattr(tokenizer, a, None) is not None for a in ("sp_model", "spm_source")):
        return "start", "▁"  # a slow SentencePiece tokenizer (T5; Marian keeps spm_source)
    raise ValueError(
        f"cannot tell where words start for {type(tokenizer).__name__}: pass the fast "
        "tokenizer's BatchEncoding (its word_ids()), or leave words=False"
    )


def marker_word_ids(tokens: Sequence[str], tokenizer) -> list[int]:
    """The word index of each token, from the tokenizer's marker (see :func:`word_scheme`)."""
    how, mark = word_scheme(tokenizer)
    special = set(getattr(tokenizer, "all_special_tokens", ()))
    ids: list[int] = []
    after_special = True
    for token in tokens:
        if token in special:
            starts, after_special = True, True
        else:
            marked = token.startswith(mark)
            starts = after_special or (marked if how == "start" else not marked)
            after_special = False
        ids.append(0 if not ids else ids[-1] + starts)
    return ids


def encoding_word_ids(word_ids: Sequence[int | None]) -> list[int]:
    """A fast tokenizer's ``word_ids()`` (``None`` for special tokens) -> consecutive word
    indices, each special token a word of its own."""
    ids: list[int] = []
    last = object()
    for w in word_ids:
        starts = not ids or w is None or w != last
        ids.append(0 if not ids else ids[-1] + starts)
        last = object() if w is None else w
    return ids


def word_labels(tokens: Sequence[str], ids: Sequence[int], tokenizer) -> list[str]:
    """Each word's text: its tokens joined by the tokenizer (``##``, ``▁`` and ``Ġ`` undone)."""
    groups: list[list[str]] = [[] for _ in range(ids[-1] + 1)] if ids else []
    for token, w in zip(tokens, ids, strict=True):
        groups[w].append(token)
    join = getattr(tokenizer, "convert_tokens_to_string", None)
    return [(join(g).strip() or "".join(g)) if join else "".join(g) for g in groups]


def merge_weights(w: Tensor, row_ids: Sequence[int], col_ids: Sequence[int]) -> Tensor:
    """``(..., Tq, Tk)`` token attention -> ``(..., Wq, Wk)`` word attention (float32): keys
    summed over a word's tokens, query rows averaged
    (:func:`attnkit.interpret.pieces.merge_by_word_ids`)."""
    return merge_by_word_ids(w.to(torch.float32), row_ids, col_ids)
