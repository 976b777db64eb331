"""Translate text with a trained model: batched by length, returned in the input order."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attnkit import devices
from attnkit.apps.translation.config import DecodeConfig
from attnkit.apps.translation.data import (
    Tokenizer,
    collate,
    encode_sources,
    restore_order,
    sorted_batches,
)
from attnkit.apps.translation.decode.records import TranslationAttention
from attnkit.decoding import beam_search, greedy_decode, length_penalty
from attnkit.modules.seq2seq import Seq2SeqModel
from attnkit.precision import resolve as resolve_bf16

log = logging.getLogger(__name__)


@dataclass
class Translation(TranslationAttention):
    """One source sentence's translations (``n_best`` of them, best first).

    ``scores[k]`` is ``log p(y|x) / lp(|y|)``, the GNMT length-normalised log-probability with
    the config's ``decode.length_penalty`` alpha (Wu et al. 2016, eq. 14), the quantity beam
    search ranks by; greedy output is scored the same way, so the two compare.
    ``log_probs[k]`` is the plain ``log p(y|x)`` (EOS included when finished).
    ``finished[k]`` is False when hypothesis ``k`` was cut at the length limit before EOS; its
    attention then has one row per output piece, else one more for the EOS step (see
    :meth:`rows`). ``attention[k]`` holds ``{name: (H, T_out, S)}`` for the decoder and, for a
    Transformer, the encoder's ``{"encoder.layer{l}": (H, S, S)}``. The core's views take
    it as a labelled attention record (:class:`.records.TranslationAttention`).
    """

    source: str
    outputs: list[str]
    scores: list[float]
    src_pieces: list[str]
    tgt_pieces: list[list[str]]
    finished: list[bool]
    attention: list[dict[str, Tensor]] | None = None
    log_probs: list[float] | None = None

    @property
    def text(self) -> str:
        return self.outputs[0]

    def rows(self, hypothesis: int = 0) -> list[str]:
        """One label per decoding step of ``hypothesis``: its pieces, then ``</s>`` if it
        finished: the row labels of its decoder attention."""
        return self.tgt_pieces[hypothesis] + (["</s>"] if self.finished[hypothesis] else [])


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
    device = devices.of(model)  # batches are built here and moved once, to the model
    bf16 = resolve_bf16(decode.bf16, device, field="decode.bf16")
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16)
    beam = decode.beam_size if beam_size is None else beam_size
    alpha = decode.length_penalty
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
        batch = collate([examples[i] for i in index], pad_id=tokenizer.pad_id).to(device)
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
        encoder = model.encoder_attention(batch.src, batch.src_mask) if need_weights else {}
        for row, (position, hyps) in enumerate(zip(batch.indices.tolist(), nbest, strict=True)):
            order.append(position)
            _add_encoder(hyps, encoder, row, batch.src_mask[row])
            t = _translation(tokenizer, texts[position], examples[position].src, hyps, alpha)
            results.append(t)
        if progress is not None:
            progress(len(index))
    return restore_order(order, results)


def _add_encoder(hyps, encoder: dict[str, Tensor], row: int, keep: Tensor) -> None:
    """Give each hypothesis its sentence's encoder self-attention, padding stripped."""
    for name, w in encoder.items():  # (B, H, S, S)
        real = w[row][:, keep][:, :, keep]  # (H, S_real, S_real)
        for h in hyps:
            h.attention[name] = real


def _translation(tokenizer: Tokenizer, source: str, src_ids, hyps, alpha: float) -> Translation:
    tokens = [h.tokens for h in hyps]
    return Translation(
        source=source,
        outputs=tokenizer.decode_tgt(tokens),
        scores=[h.score / length_penalty(h.length, alpha) for h in hyps],
        log_probs=[h.score for h in hyps],
        src_pieces=tokenizer.src_pieces(src_ids),
        tgt_pieces=[tokenizer.tgt_pieces(t) for t in tokens],
        finished=[h.finished for h in hyps],
        attention=[{k: v.float().cpu() for k, v in h.attention.items()} for h in hyps]  # fp32
        if hyps[0].attention is not None
        else None,
    )


def empty_note(translations: Sequence[Translation], beam: int) -> str | None:
    """A warning, also logged, when some translations are empty: the search ended them at
    once (a lightly trained model often scores ``</s>`` first; beam search, which compares
    whole hypotheses, then prefers the empty one). None when every one has a word."""
    empty = sum(1 for t in translations if not t.text.strip())
    if not empty:
        return None
    note = (
        f"{empty} of {len(translations)} translations are empty (the search ended them at "
        f"once, beam {beam}); a lightly trained model does this: try --beam 1, or train longer"
    )
    log.warning(note)
    return note
