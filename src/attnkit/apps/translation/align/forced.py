"""Forced decoding: the cross-attention a model pays while it is fed a given reference.

Attention-as-alignment is measured on gold sentence pairs (Och & Ney 2003; Bahdanau et al.
2015 read attention as a soft alignment). The model does not translate: it is run with teacher
forcing on the **reference** target (``forward(src, src_mask, tgt_in, need_weights=True)``),
so row ``k`` of the attention is what the decoder looked at when it emitted reference piece
``k`` (the last row, the EOS step, is dropped). Subword pieces are then merged into the gold's
own words:

- words are the gold text split on whitespace; each sentencepiece piece is mapped to words by
  its **character offsets** in the text the model saw (sentencepiece reports them), not by its
  "▁" mark, so the word count is the gold's whatever sentencepiece does to whitespace, unknown
  characters or a bare "▁" piece; a piece straddling two words (possible with
  ``detokenize=True``) is shared between them by characters;
- a source word's weight is the **sum** over its pieces, a target word's row the **mean** of
  its pieces' rows (as :func:`attnkit.interpret.alignments.merge_subwords`), so each row that
  was a distribution stays one.

Shapes: piece level ``(T_pieces, S_pieces)``, word level ``(T_words, S_words)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attnkit.apps.translation.data import Example, collate, restore_order, sorted_batches
from attnkit.modules.seq2seq import Seq2SeqModel

Layer = int | str  # a decoder layer index (negative counts from the end) or "mean"

# Tokens glued to the previous / next word by the simple detokeniser (Europarl-style tokens).
_ATTACH_LEFT = {".", ",", "!", "?", ";", ":", ")", "]", "}", "%", "'s", "n't", "'re", "'ll", "'m"}
_ATTACH_RIGHT = {"(", "[", "{"}


class WordMismatchError(ValueError):
    """Pieces and gold words do not line up; the message names the sentence."""


@dataclass
class ForcedAttention:
    """One sentence pair's forced-decoding attention.

    Attributes:
        source_words, target_words: the gold's words (its text split on whitespace).
        weights: ``(T_words, S_words)`` float64 word-level attention.
        src_pieces, tgt_pieces: the pieces the model read.
        piece_weights: ``(T_pieces + 1, S_pieces)`` the raw attention, EOS step last.
    """

    source_words: list[str]
    target_words: list[str]
    weights: Tensor
    src_pieces: list[str]
    tgt_pieces: list[str]
    piece_weights: Tensor


# ----------------------------------------------------------------------- choosing attention
def cross_attention(
    attention: dict[str, Tensor], layer: Layer = "mean", head: int | None = None
) -> Tensor:
    """The source attention of a teacher-forced ``forward``: ``(B, T, S)``, heads averaged
    (or one ``head``, e.g. the head trained by :mod:`attnkit.apps.translation.align.guided`).

    Recurrent models have one ``"cross"`` entry ``(B, 1, T, S)``; Transformers have
    ``"layer{l}.cross"`` ``(B, H, T, S)`` per decoder layer: ``layer`` picks one (an int,
    negative from the end) or ``"mean"`` averages all layers (``layer`` is ignored for RNNs).
    """
    if "cross" in attention:
        return attention["cross"].float().mean(1)  # (B, T, S)
    heads = next((w.size(1) for n, w in attention.items() if n.endswith(".cross")), 0)
    if head is not None and not -heads <= head < heads:
        raise ValueError(f"--head {head} does not exist: each decoder layer has {heads} heads")
    pick = (lambda w: w.float().mean(1)) if head is None else (lambda w: w[:, head].float())
    names = sorted(
        (n for n in attention if n.startswith("layer") and n.endswith(".cross")),
        key=lambda n: int(n[len("layer") : -len(".cross")]),
    )
    if not names:
        raise ValueError(
            f"the model returned no cross-attention (names: {sorted(attention)}); "
            "a model without attention has no alignment to extract"
        )
    if layer == "mean":
        return torch.stack([pick(attention[n]) for n in names]).mean(0)  # (B, T, S)
    if isinstance(layer, str):
        raise ValueError(f'layer must be an int or "mean", got {layer!r}')
    if not -len(names) <= layer < len(names):
        raise ValueError(f"layer {layer} does not exist: the decoder has {len(names)} layers")
    return pick(attention[names[layer]])  # (B, T, S)


@torch.no_grad()
def forced_piece_attention(
    model: Seq2SeqModel,
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    *,
    layer: Layer = "mean",
    head: int | None = None,
    bos_id: int = 2,
    eos_id: int = 3,
    pad_id: int = 0,
    max_tokens: int = 4000,
    progress: Callable[[int], None] | None = None,
) -> list[Tensor]:
    """Teacher-forced cross-attention per sentence: ``(len(tgt) + 1, len(src))`` each (float32;
    row ``k`` emitted target piece ``k``, the last row emitted EOS). Sentences are batched by
    length (``max_tokens`` padded tokens) and returned in input order."""
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"{len(src_ids)} sources but {len(tgt_ids)} targets")
    model.eval()
    examples = [Example(i, s, t) for i, (s, t) in enumerate(zip(src_ids, tgt_ids, strict=True))]
    order: list[int] = []
    out: list[Tensor] = []
    for index in sorted_batches(examples, max_tokens):
        batch = collate([examples[i] for i in index], pad_id=pad_id, bos_id=bos_id, eos_id=eos_id)
        result = model(batch.src, batch.src_mask, batch.tgt_in, need_weights=True)
        weights = cross_attention(result.attention, layer, head)  # (B, T, S)
        for b, position in enumerate(batch.indices.tolist()):
            s, t = len(examples[position].src), len(examples[position].tgt) + 1
            out.append(weights[b, :t, :s].clone())  # (T_pieces + 1, S_pieces)
            order.append(position)
        if progress is not None:
            progress(len(index))
    return restore_order(order, out)


# ---------------------------------------------------------------------- pieces to gold words
def detokenize(words: Sequence[str]) -> str:
    """Join tokens as running text: no space before ``, . ! ? ; : ) 's n't`` and the like, none
    after ``(``. Quotes stay spaced (their side is ambiguous)."""
    text = ""
    for k, word in enumerate(words):
        glue = k == 0 or word in _ATTACH_LEFT or words[k - 1] in _ATTACH_RIGHT
        text += word if glue else " " + word
    return text


def _word_spans(text: str, words: Sequence[str]) -> list[tuple[int, int]]:
    """UTF-8 byte spans of ``words`` found in order in ``text``."""
    data, spans, at = text.encode("utf-8"), [], 0
    for word in words:
        token = word.encode("utf-8")
        start = data.find(token, at)
        if start < 0:
            raise WordMismatchError(f"word {word!r} not found in {text!r}")
        spans.append((start, start + len(token)))
        at = start + len(token)
    return spans


def word_pooling(pieces, spans: Sequence[tuple[int, int]], where: str = "<sentence>") -> Tensor:
    """``(n_pieces, n_words)`` float64, each row summing to 1: how much of each piece belongs to
    each word, by the overlap of the piece's byte span (``piece.begin``, ``piece.end`` of a
    sentencepiece proto) with the words' byte ``spans``. A piece covering no word character (a
    bare "▁", whitespace) goes with the next piece's words, or the previous one's at the end.
    Raises :class:`WordMismatchError` naming ``where`` when a word gets no piece."""
    begin = torch.tensor([[p.begin] for p in pieces], dtype=torch.float64).reshape(-1, 1)
    end = torch.tensor([[p.end] for p in pieces], dtype=torch.float64).reshape(-1, 1)
    word = torch.tensor(list(spans), dtype=torch.float64).reshape(-1, 2)  # (n_words, 2)
    overlap = torch.minimum(end, word[:, 1]) - torch.maximum(begin, word[:, 0])  # (P, W)
    pool = overlap.clamp(min=0)
    empty = [p for p in range(len(pieces)) if pool[p].sum() == 0]
    for p in empty:
        later = [q for q in range(p + 1, len(pieces)) if q not in empty]
        earlier = [q for q in range(p) if q not in empty]
        if later or earlier:
            pool[p] = pool[later[0] if later else earlier[-1]]
    if len(spans) and (pool.sum(0) == 0).any():
        missing = [w for w in range(len(spans)) if pool[:, w].sum() == 0]
        raise WordMismatchError(
            f"{where}: words {missing} (0-based) of {len(spans)} get no subword piece; "
            "pieces and gold words do not line up"
        )
    return pool / pool.sum(1, keepdim=True).clamp(min=1e-12)


def merge_to_words(
    piece_weights: Tensor, src_pool: Tensor, tgt_pool: Tensor, shift: bool = False
) -> Tensor:
    """Piece-level ``(T_pieces[+1], S_pieces)`` to word-level ``(T_words, S_words)`` with the
    pooling matrices of :func:`word_pooling`: a source word sums its (shares of) pieces, a
    target word averages its pieces' rows, weighted by their shares. Piece ``k`` takes row
    ``k`` (the step that emitted it; the EOS row is dropped) or, with ``shift``, row ``k + 1``
    (the step that read it as input: "Shift-Att", Chen et al. 2020, section 3; needs the EOS
    row)."""
    n = tgt_pool.shape[0]
    if shift and piece_weights.shape[0] < n + 1:
        raise ValueError(f"shift needs {n + 1} rows (the EOS step), got {piece_weights.shape[0]}")
    w = piece_weights.to(torch.float64)[int(shift) : n + int(shift)]  # (T_pieces, S_pieces)
    tgt = tgt_pool / tgt_pool.sum(0).clamp(min=1e-12)  # each column averages its word's pieces
    return tgt.T @ w @ src_pool  # (T_words, S_words)


def _encode(processor, texts: Sequence[str], words: Sequence[list[str]], side: str, first: int):
    """Ids, pieces and pooling matrices of ``texts`` whose gold words are ``words``."""
    ids, pieces, pools = [], [], []
    for n, (text, toks) in enumerate(zip(texts, words, strict=True)):
        proto = processor.encode(text, return_type="proto")
        ids.append([piece.id for piece in proto.pieces])
        pieces.append([piece.piece for piece in proto.pieces])
        where = f"sentence {first + n} ({side} {' '.join(toks)[:60]!r})"
        if not toks:
            raise WordMismatchError(f"{where}: the {side} side is empty")
        try:
            spans = _word_spans(text, toks)
        except WordMismatchError as error:
            raise WordMismatchError(f"{where}: {error}") from None
        pools.append(word_pooling(proto.pieces, spans, where))
    return ids, pieces, pools


def forced_attention(
    model: Seq2SeqModel,
    tokenizer,
    pairs: Sequence[tuple[str, str]],
    *,
    layer: Layer = "mean",
    head: int | None = None,
    detok: bool = False,
    shift: bool = False,
    max_tokens: int = 4000,
    first_index: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[ForcedAttention]:
    """Word-level cross-attention of ``model`` teacher-forced on each ``(source, reference)``
    pair of whitespace-tokenised text (one per gold sentence).

    Args:
        model, tokenizer: a trained model and its :class:`attnkit.apps.translation.data.Tokenizer`.
        pairs: ``(source, reference)`` texts; their whitespace-separated tokens are the words.
        layer, head: a decoder layer (int) or ``"mean"``; one head, or (None) all averaged.
        detok: feed the model running text (:func:`detokenize`: no space before punctuation),
            closer to untokenised training data; pieces are still mapped back to the tokens.
        shift: align target piece ``k`` with the attention of the step that reads it rather
            than the step that emits it (:func:`merge_to_words`).
        first_index: the number of ``pairs[0]`` in error messages (1 = line numbers).

    Returns one :class:`ForcedAttention` per pair, ``weights`` of shape
    ``(len(reference words), len(source words))``.
    """
    src_words = [src.split() for src, _ in pairs]
    tgt_words = [tgt.split() for _, tgt in pairs]
    join = detokenize if detok else " ".join
    src_ids, src_pieces, src_pools = _encode(
        tokenizer.src, [join(w) for w in src_words], src_words, "source", first_index
    )
    tgt_ids, tgt_pieces, tgt_pools = _encode(
        tokenizer.tgt, [join(w) for w in tgt_words], tgt_words, "target", first_index
    )
    ids = dict(bos_id=tokenizer.bos_id, eos_id=tokenizer.eos_id, pad_id=tokenizer.pad_id)
    raw = forced_piece_attention(
        model,
        src_ids,
        tgt_ids,
        layer=layer,
        head=head,
        max_tokens=max_tokens,
        progress=progress,
        **ids,
    )
    return [
        ForcedAttention(
            src_words[n],
            tgt_words[n],
            merge_to_words(raw[n], src_pools[n], tgt_pools[n], shift),
            src_pieces[n],
            tgt_pieces[n],
            raw[n],
        )
        for n in range(len(pairs))
    ]
