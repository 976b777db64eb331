"""The attention step: score -> mask -> normalise -> weighted sum.

Entry points:

- :func:`attend` - the one attention function, returning :class:`AttentionOutput`;
  :func:`attend_chunked` / :func:`iter_attend` - the same, query chunk by query chunk, so the
  weights of long inputs never need more than one ``(B, H, chunk, Tk)`` block of temporaries.
- scores: :func:`dot_score`, :func:`scaled_dot_score`, :class:`GeneralScore`,
  :class:`AdditiveScore`, :class:`LocationScore`, :func:`build_score`.
- normalisers: :mod:`attnkit.attention.normalisers` (softmax, sparsemax, entmax15, hard, gumbel,
  sample) and :func:`reinforce_loss`.
- masks: :func:`padding_mask`, :func:`key_padding_mask`, :func:`causal_mask`,
  :func:`window_mask`, :func:`combine` (True = may attend).
- layers: :class:`AdditiveAttention`, :class:`MultiplicativeAttention`,
  :class:`LocationAttention`, :class:`LocalAttention`, :class:`MultiHeadAttention`.
"""

from attnkit.attention.functional import AttentionOutput, attend, attend_chunked, iter_attend
from attnkit.attention.layers import AdditiveAttention, LocationAttention, MultiplicativeAttention
from attnkit.attention.local import LocalAttention
from attnkit.attention.masks import (
    causal_mask,
    combine,
    key_padding_mask,
    padding_mask,
    to_blocked,
    window_mask,
)
from attnkit.attention.multihead import KVCache, MultiHeadAttention
from attnkit.attention.normalisers import NORMALISERS, reinforce_loss
from attnkit.attention.scores import (
    AdditiveScore,
    GeneralScore,
    LocationScore,
    build_score,
    dot_score,
    scaled_dot_score,
)

__all__ = [
    "NORMALISERS",
    "AdditiveAttention",
    "AdditiveScore",
    "AttentionOutput",
    "GeneralScore",
    "KVCache",
    "LocalAttention",
    "LocationAttention",
    "LocationScore",
    "MultiHeadAttention",
    "MultiplicativeAttention",
    "attend",
    "attend_chunked",
    "build_score",
    "causal_mask",
    "combine",
    "dot_score",
    "iter_attend",
    "key_padding_mask",
    "padding_mask",
    "reinforce_loss",
    "scaled_dot_score",
    "to_blocked",
    "window_mask",
]
