"""What a decoder returns, and the pieces greedy and beam search share.

- :class:`Hypothesis`: one output sentence with its log-probability and, on request, the
  attention recorded while it was decoded.
- :func:`length_penalty`: GNMT's ``lp(Y)`` (Wu et al. 2016, eq. (14)).
- :func:`max_lengths`: the per-sentence step limit ``min(max_len, ratio * S + offset)``.
- :func:`log_probs`: log-softmax in at least float32 (scores are summed in that precision).
- :func:`append_attention`, :func:`select_rows`, :func:`strip_attention`: an attention history
  ``{name: (N, T, H, K)}`` grown one step at a time, reordered with the beams, and cut to one
  sentence's real size at the end.

Lengths: ``|Y|`` is the number of *scored* tokens, i.e. ``len(tokens) + 1`` when the
hypothesis ended with EOS (whose log-probability is part of ``score``) and ``len(tokens)``
when it was cut at the maximum length.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor


@dataclass
class Hypothesis:
    """One decoded sentence.

    Attributes:
        tokens: output ids, without BOS and EOS.
        score: ``sum_t log p(y_t | y_<t, x)`` over the scored tokens (EOS included when
            ``finished``).
        normalised_score: ``score / lp(|Y|)`` (:func:`length_penalty`); equals ``score`` for
            ``alpha = 0``.
        finished: True when the hypothesis ended with EOS, False when cut at the max length.
        attention: None unless asked for; then ``{name: (H, T_out, K)}`` with one row per
            decoding step (``T_out = |Y|``, the EOS step included) and the padding stripped:
            ``K`` is the real source length for cross-attention and ``T_out`` for names ending
            in ``"self"`` (decoder self-attention, lower triangular). Empty for models without
            attention.
    """

    tokens: list[int]
    score: float
    normalised_score: float
    finished: bool = True
    attention: dict[str, Tensor] | None = None

    @property
    def length(self) -> int:
        """``|Y|``: the number of scored tokens (EOS counts)."""
        return len(self.tokens) + int(self.finished)


def length_penalty(length: int | Tensor, alpha: float) -> float | Tensor:
    """GNMT length penalty ``lp(Y) = (5 + |Y|)^alpha / (5 + 1)^alpha`` (Wu et al. 2016, eq. 14).

    Scores are divided by it; ``alpha = 0`` gives 1 (no normalisation), larger ``alpha``
    favours longer outputs.
    """
    return ((5 + length) / 6) ** alpha


def max_lengths(src_mask: Tensor, max_len: int | None, ratio: float, offset: int | float) -> Tensor:
    """Per-sentence step limits ``(B,)``: ``floor(ratio * S + offset)`` capped by ``max_len``,
    at least 1, where ``S`` is the number of real source tokens."""
    limits = (src_mask.sum(1).double() * ratio + offset).floor().long().clamp_min(1)  # (B,)
    if max_len is not None:
        if max_len < 1:
            raise ValueError(f"max_len must be at least 1, got {max_len}")
        limits = limits.clamp_max(max_len)
    return limits


def log_probs(logits: Tensor) -> Tensor:
    """``log_softmax`` over the vocabulary in at least float32 (float64 stays float64)."""
    return logits.to(torch.promote_types(logits.dtype, torch.float32)).log_softmax(-1)


def append_attention(
    history: dict[str, Tensor] | None, step: dict[str, Tensor]
) -> dict[str, Tensor]:
    """Append one step ``{name: (N, H, K_t)}`` to ``{name: (N, T, H, K)}``.

    Key lengths may grow from step to step (decoder self-attention); the shorter of the two
    is zero-padded on the key axis.
    """
    history = {} if history is None else history
    out = {}
    for name, weights in step.items():
        new = weights.detach().unsqueeze(1)  # (N, 1, H, K_t)
        old = history.get(name)
        if old is None:
            out[name] = new
            continue
        width = max(old.size(-1), new.size(-1))
        old = F.pad(old, (0, width - old.size(-1)))  # (N, T, H, K)
        new = F.pad(new, (0, width - new.size(-1)))  # (N, 1, H, K)
        out[name] = torch.cat([old, new], 1)  # (N, T + 1, H, K)
    return out


def select_rows(history: dict[str, Tensor] | None, rows: Tensor) -> dict[str, Tensor] | None:
    """Reorder (or prune) every history ``(N, T, H, K)`` to rows ``rows (N',)``."""
    if history is None:
        return None
    return {name: h.index_select(0, rows) for name, h in history.items()}


def strip_attention(
    history: dict[str, Tensor], row: int, steps: int, src_keep: Tensor
) -> dict[str, Tensor]:
    """One hypothesis' attention ``{name: (H, steps, K_real)}`` from row ``row`` of a history.

    ``src_keep (S,)`` is that sentence's source mask: cross-attention keeps its real source
    positions (wherever the padding is); self-attention (names ending in ``"self"``) keeps
    the first ``steps`` target positions.
    """
    out = {}
    for name, h in history.items():
        w = h[row, :steps].transpose(0, 1)  # (H, steps, K)
        w = w[..., :steps] if name.endswith("self") else w[..., src_keep]
        out[name] = w.contiguous()
    return out
