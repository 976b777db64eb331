"""Pretrained Hugging Face models in attnkit's views, alignments and attribution tools.

:func:`record` turns a model's attention (a forward pass over a batch, or a ``generate()``
output) into the core's :class:`~attnkit.interpret.structure.AttentionRecord`, one per example,
labelled by the tokenizer, padding stripped, sub-words merged to words on request. Every view
(:mod:`attnkit.viz`), heatmap, rollout, flow and alignment scorer takes those records as they
are. :func:`eager_attention` is the switch to weight-returning attention that :func:`record`
uses. transformers is an optional extra (``pip install attnkit[hf]``); this package never
imports it at module level, and the core never imports this package.
"""

from attnkit.hf.eager import NoWeightsError, eager_attention, implementation
from attnkit.hf.record import record
from attnkit.hf.words import merge_weights, word_scheme

__all__ = [
    "NoWeightsError",
    "eager_attention",
    "implementation",
    "merge_weights",
    "record",
    "word_scheme",
]
