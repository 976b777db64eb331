"""Decoding translation models through the :class:`~attnkit.modules.seq2seq.Seq2SeqModel`
step interface: greedy and beam search, both batched, both able to return attention.

- :func:`greedy_decode`: one :class:`Hypothesis` per sentence.
- :func:`beam_search`: ``n_best`` hypotheses per sentence, GNMT length penalty, attention
  tracked per beam (so attention can be plotted for beam-search output too).
- :func:`decode`: the top hypothesis per sentence, greedy for ``beam_size=1``.
"""

from attnkit.decoding.beam import beam_search
from attnkit.decoding.greedy import greedy_decode
from attnkit.decoding.hypothesis import Hypothesis, length_penalty, max_lengths
from attnkit.decoding.translate import decode

__all__ = [
    "Hypothesis",
    "beam_search",
    "decode",
    "greedy_decode",
    "length_penalty",
    "max_lengths",
]
