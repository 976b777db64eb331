"""The attention step: score -> mask -> normalise -> weighted sum.

Entry points:

- :func:`attend` - the one attention function, returning :class:`AttentionOutput`;
  :func:`attend_chunked` / :func:`iter_attend` - the same, query chunk by query chunk, so the
  weights of long inputs never need more than one ``(B, H, chunk, Tk)`` block of temporaries.
- scores: :func:`dot_score`, :func:`scaled_dot_score`, :class:`GeneralScore`,
  :class:`AdditiveScore`, :class:`LocationScore`, :func:`build_score`.
- normalisers: :mod:`attnkit.attention.normalisers` (softmax, sparsemax, entmax15, hard, gumbel,
  sample, sigmoid) and :func:`reinforce_loss`.
- masks: :func:`padding_mask`, :func:`key_padding_mask`, :func:`causal_mask`,
  :func:`window_mask`, :func:`sliding_window_mask`, :func:`combine` (True = may attend).
- positions as relations (:mod:`~attnkit.attention.positions`): :func:`attend_shaw` (Shaw et
  al. 2018, with the Music Transformer's skewing), :func:`attend_t5` (Raffel et al. 2020),
  :func:`attend_alibi` (Press et al. 2022), :func:`attend_rope` (Su et al. 2021); each a
  score bias or a rotation passed through :func:`attend`.
- graphs (:mod:`~attnkit.attention.graph`): :func:`edge_mask` (GAT's neighbourhoods as a mask,
  Veličković et al. 2018), :func:`edge_type_bias` (a learned scalar per edge type and head).
- gates (:mod:`~attnkit.attention.gates`): :class:`AttentionGate`, the Attention U-Net's
  additive gate on a 2D skip connection (Oktay et al. 2018), returning :class:`GateOutput`.
- layers: :class:`AdditiveAttention`, :class:`MultiplicativeAttention`,
  :class:`LocationAttention`, :class:`LocalAttention`, :class:`MultiHeadAttention` (with
  grouped-query heads, ``kv_heads``, and a sliding window, ``window``/``sinks``);
  :class:`LocationAwareAttention` (Chorowski et al. 2015, speech: convolutional features of the
  previous step's weights), one decoder step a call.
"""

from attnkit.attention.coverage import CoverageAttention, coverage_loss
from attnkit.attention.functional import AttentionOutput, attend, attend_chunked, iter_attend
from attnkit.attention.gates import AttentionGate, GateOutput
from attnkit.attention.graph import batch_edge_mask, edge_mask, edge_type_bias
from attnkit.attention.layers import AdditiveAttention, LocationAttention, MultiplicativeAttention
from attnkit.attention.local import LocalAttention
from attnkit.attention.location_aware import LocationAwareAttention
from attnkit.attention.masks import (
    causal_mask,
    combine,
    key_padding_mask,
    padding_mask,
    sliding_window_mask,
    to_blocked,
    window_mask,
)
from attnkit.attention.multihead import KVCache, MultiHeadAttention
from attnkit.attention.normalisers import NORMALISERS, reinforce_loss
from attnkit.attention.pointer import (
    GenerationGate,
    copy_distribution,
    log_pointer_mixture,
    pointer_mixture,
)
from attnkit.attention.position_bias import attend_alibi, attend_t5
from attnkit.attention.positions import POSITIONS
from attnkit.attention.relative import attend_shaw
from attnkit.attention.rotary import attend_rope
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
    "POSITIONS",
    "AdditiveAttention",
    "AdditiveScore",
    "AttentionGate",
    "AttentionOutput",
    "CoverageAttention",
    "GateOutput",
    "GeneralScore",
    "GenerationGate",
    "KVCache",
    "LocalAttention",
    "LocationAttention",
    "LocationAwareAttention",
    "LocationScore",
    "MultiHeadAttention",
    "MultiplicativeAttention",
    "attend",
    "attend_alibi",
    "attend_rope",
    "attend_shaw",
    "attend_t5",
    "batch_edge_mask",
    "attend_chunked",
    "build_score",
    "causal_mask",
    "combine",
    "copy_distribution",
    "coverage_loss",
    "dot_score",
    "edge_mask",
    "edge_type_bias",
    "iter_attend",
    "key_padding_mask",
    "log_pointer_mixture",
    "padding_mask",
    "pointer_mixture",
    "reinforce_loss",
    "scaled_dot_score",
    "sliding_window_mask",
    "to_blocked",
    "window_mask",
]
