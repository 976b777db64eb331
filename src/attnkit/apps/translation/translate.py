"""Translate text with a trained model: batched by length, returned in the input order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attnkit.apps.translation.config import DecodeConfig
from attnkit.apps.translation.data import (
    Tokenizer,
    collate,
    encode_sources,
    restore_order,
    sorted_batches,
)
from attnkit.decoding import beam_search, greedy_decode
from attnkit.modules.seq2seq import Seq2SeqModel
from attnkit.precision import resolve as resolve_bf16


@dataclass
class Translation:
    """One source sentence's translations (``n_best`` of them, best first).

    ``finished[k]`` is False when hypothesis ``k`` was cut at the length limit before EOS; its
    attention then has one row per output piece, else one more for the EOS step.
    """

    source: str
    outputs: list[str]
    scores: list[float]
    src_pieces: list[str]
    tgt_pieces: list[list[str]]
    finished: list[bool]
    attention: list[dict[str, Tensor]] | None = None

    @property
    def text(self) -> str:
        return self.outputs[0]


@torch.no_grad()
def translate_texts(
    model: Seq2SeqModel,
    tokenizer: Tokenizer,
    texts: Sequence[str],
    decode: DecodeConfig,
    *,
    beam_size: int | None = None,
    need_weights: bool = False,
    progress=None,
) -> list[Translation]:
    """Translate ``texts``; ``beam_size`` overrides ``decode.beam_size`` (1 = greedy).

    With ``need_weights`` every translation carries its attention per hypothesis:
    ``{name: (H, T_out, S)}`` (see :class:`attnkit.decoding.Hypothesis`), under greedy and
    beam search alike. ``progress`` is an optional callable given the number of sentences done.
    ``decode.bf16`` runs the search under bfloat16 autocast (``auto``: where native).
    """
    model.eval()
    device = next(model.parameters()).device.type
    bf16 = resolve_bf16(decode.bf16, device, field="decode.bf16")
    autocast = torch.autocast(device, dtype=torch.bfloat16, enabled=bf16)
    beam = decode.beam_size if beam_size is None else beam_size
    examples = encode_sources(tokenizer, list(texts))
    kwargs = dict(
        bos_id=tokenizer.bos_id,
        eos_id=tokenizer.eos_id,
        max_len_ratio=decode.max_len_ratio,
        max_len_offset=decode.max_len_offset,
        need_weights=need_weights,
    )
    order, results = [], []
    for index in sorted_batches(examples, decode.max_tokens):
        batch = collate([examples[i] for i in index], pad_id=tokenizer.pad_id)
        with autocast:
            if beam == 1:
                nbest = [[h] for h in greedy_decode(model, batch.src, batch.src_mask, **kwargs)]
            else:
                nbest = beam_search(
                    model,
                    batch.src,
                    batch.src_mask,
                    beam_size=beam,
                    length_penalty=decode.length_penalty,
                    n_best=min(decode.n_best, beam),
                    **kwargs,
                )
        for position, hyps in zip(batch.indices.tolist(), nbest, strict=True):
            order.append(position)
            results.append(_translation(tokenizer, texts[position], examples[position].src, hyps))
        if progress is not None:
            progress(len(index))
    return restore_order(order, results)


def _translation(tokenizer: Tokenizer, source: str, src_ids, hyps) -> Translation:
    tokens = [h.tokens for h in hyps]
    return Translation(
        source=source,
        outputs=tokenizer.decode_tgt(tokens),
        scores=[h.normalised_score for h in hyps],
        src_pieces=tokenizer.src_pieces(src_ids),
        tgt_pieces=[tokenizer.tgt_pieces(t) for t in tokens],
        finished=[h.finished for h in hyps],
        attention=[{k: v.float() for k, v in h.attention.items()} for h in hyps]  # fp32 (bf16)
        if hyps[0].attention is not None
        else None,
    )
