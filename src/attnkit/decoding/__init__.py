"""Decoding translation models through the :class:`~attnkit.modules.seq2seq.Seq2SeqModel`
step interface: greedy and beam search, both batched, both able to return attention.

- :func:`greedy_decode`: one :class:`Hypothesis` per sentence.
- :func:`beam_search`: ``n_best`` hypotheses per sentence, GNMT length penalty, attention
  tracked per beam (so attention can be plotted for beam-search output too).
- :func:`decode`: the top hypothesis per sentence, greedy for ``beam_size=1``.
- CTC outputs (:mod:`~attnkit.decoding.ctc`, Graves et al. 2006): :func:`ctc_greedy_decode`
  (best path) and :func:`ctc_prefix_beam_search` (Hannun et al. 2014), per sequence with lengths.
"""

from attnkit.decoding.beam import beam_search
from attnkit.decoding.ctc import ctc_collapse, ctc_greedy_decode, ctc_prefix_beam_search
from attnkit.decoding.greedy import greedy_decode
from attnkit.decoding.hypothesis import Hypothesis, length_penalty, max_lengths
from attnkit.decoding.translate import decode

__all__ = [
    "Hypothesis",
    "beam_search",
    "ctc_collapse",
    "ctc_greedy_decode",
    "ctc_prefix_beam_search",
    "decode",
    "greedy_decode",
    "length_penalty",
    "max_lengths",
]
