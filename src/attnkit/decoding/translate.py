"""One call for "the best translation of each sentence", greedy or beam."""

from __future__ import annotations

from torch import Tensor

from attnkit.decoding.beam import beam_search
from attnkit.decoding.greedy import greedy_decode
from attnkit.decoding.hypothesis import Hypothesis
from attnkit.modules.seq2seq import Seq2SeqModel


def decode(
    model: Seq2SeqModel, src: Tensor, src_mask: Tensor, *, beam_size: int = 1, **kwargs
) -> list[Hypothesis]:
    """The top hypothesis per sentence of ``src (B, S)``.

    ``beam_size == 1`` runs :func:`~attnkit.decoding.greedy.greedy_decode` (which beam search
    with one beam equals), larger beams :func:`~attnkit.decoding.beam.beam_search`. The
    keyword arguments (``bos_id``, ``eos_id``, ``max_len``, ``max_len_ratio``,
    ``max_len_offset``, ``need_weights``, ``length_penalty``) go to the chosen function.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    if beam_size == 1:
        return greedy_decode(model, src, src_mask, **kwargs)
    return [best[0] for best in beam_search(model, src, src_mask, beam_size=beam_size, **kwargs)]
