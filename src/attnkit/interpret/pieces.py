"""Sub-word pieces back to words, for the three conventions tokenizers write pieces in.

- **SentencePiece** (Kudo & Richardson 2018; T5, Marian, attnkit's translation models): a piece
  starting with "▁" (U+2581) begins a word;
- **WordPiece** (Schuster & Nakajima 2012; BERT, MiniLM): a piece starting with "##" continues
  the word before it;
- **byte-level BPE** (Radford et al. 2019; GPT-2, RoBERTa): a piece starting with "Ġ" (a space
  byte) begins a word.

The convention is told from the pieces themselves (:func:`piece_scheme`): "▁" anywhere means
SentencePiece, else "##" means WordPiece, else "Ġ" means byte-level BPE. The first piece
always begins word 0. Merged attention keeps distributions: a key word receives the **sum**
of its pieces' weights, a query word's row is the **mean** of its pieces' rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

WORD_START = "\u2581"  # sentencepiece's "▁": the piece begins a new word
CONTINUE = "##"  # WordPiece: the piece continues the word before it
BYTE_START = "\u0120"  # byte-level BPE's "Ġ" (the space byte): the piece begins a new word


def piece_scheme(pieces: Sequence[str]) -> tuple[str, str]:
    """``("start", "▁")``, ``("continue", "##")`` or ``("start", "Ġ")``, from the pieces."""
    if any(p.startswith(WORD_START) for p in pieces):
        return "start", WORD_START
    if any(p.startswith(CONTINUE) and len(p) > len(CONTINUE) for p in pieces):
        return "continue", CONTINUE
    if any(p.startswith(BYTE_START) for p in pieces):
        return "start", BYTE_START
    return "start", WORD_START  # no mark at all: one word (no piece says a word begins)


def piece_word_ids(pieces: Sequence[str]) -> list[int]:
    """The word index of each piece (see the module docstring for the conventions)."""
    how, mark = piece_scheme(pieces)
    ids: list[int] = []
    for k, piece in enumerate(pieces):
        marked = piece.startswith(mark) and (how == "start" or len(piece) > len(mark))
        starts = marked if how == "start" else not marked
        ids.append(0 if k == 0 else ids[-1] + starts)
    return ids


def merge_pieces(pieces: Sequence[str]) -> list[str]:
    """The words the pieces spell, without the marks."""
    how, mark = piece_scheme(pieces)
    words: list[str] = []
    for piece, word in zip(pieces, piece_word_ids(pieces), strict=True):
        text = piece.removeprefix(mark) if len(piece) > len(mark) or how == "start" else piece
        if word == len(words):
            words.append(text)
        else:
            words[-1] += text
    return words


def _one_hot(ids: Sequence[int], dtype: torch.dtype) -> Tensor:
    """``(n_tokens, n_words)``: column ``w`` marks the tokens of word ``w``."""
    index = torch.tensor(list(ids), dtype=torch.long)
    n_words = int(index.max()) + 1 if len(index) else 0
    return torch.nn.functional.one_hot(index, n_words).to(dtype)


def merge_by_word_ids(weights: Tensor, row_ids: Sequence[int], col_ids: Sequence[int]) -> Tensor:
    """Token attention ``(..., Tq, Tk)`` to word attention ``(..., Wq, Wk)`` given each row's
    and each column's word index: a key word receives the **sum** of its tokens' weights, a
    query word's row is the **mean** of its tokens' rows, so a distribution stays one. Keeps
    the weights' floating dtype."""
    rows, cols = _one_hot(row_ids, weights.dtype), _one_hot(col_ids, weights.dtype)
    rows = rows / rows.sum(0).clamp(min=1.0)  # (Tq, Wq): each column averages its word's rows
    return rows.T @ weights @ cols  # (..., Wq, Wk)


def merge_subwords(weights, src_pieces: Sequence[str], tgt_pieces: Sequence[str]) -> Tensor:
    """Piece-level attention ``(..., T_out, S)`` to word-level ``(..., T_words, S_words)``.

    ``T_out`` is ``len(tgt_pieces)``, or one more when the last row is the EOS step (that row is
    dropped: EOS is no word). The weights of a source word are the **sum** over its pieces (the
    attention paid to the word), a target word's row the **mean** over its pieces' rows, so each
    row that was a distribution stays one. Returns float64.
    """
    w = torch.as_tensor(weights, dtype=torch.float64).detach().cpu()
    if w.dim() < 2 or w.shape[-1] != len(src_pieces):
        raise ValueError(f"weights of shape {tuple(w.shape)} need {len(src_pieces)} source columns")
    if w.shape[-2] not in (len(tgt_pieces), len(tgt_pieces) + 1):
        raise ValueError(
            f"weights of shape {tuple(w.shape)} need {len(tgt_pieces)} target rows, "
            f"or {len(tgt_pieces) + 1} with the EOS step"
        )
    w = w[..., : len(tgt_pieces), :]  # drop the EOS row: (..., T_pieces, S_pieces)
    return merge_by_word_ids(w, piece_word_ids(tgt_pieces), piece_word_ids(src_pieces))
