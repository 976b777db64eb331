"""What an attention call returns: :class:`AttentionOutput`.

Its own module so that both :mod:`attnkit.attention.functional` (the readable path) and
:mod:`attnkit.attention.fast` (the fast dispatch) build it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


@dataclass
class AttentionOutput:
    """What an attention call returns. Weights are returned, never stored on a module.

    Attributes:
        context: ``(B, H, Tq, Dv)`` (or ``(B, Tq, Dv)`` for 3-d inputs; ``(B, Tq, D)`` from
            :class:`MultiHeadAttention`).
        weights: ``(B, H, Tq, Tk)`` (``(B, Tq, Tk)`` for 3-d inputs), or ``None`` when the
            caller did not ask for them. These are the normaliser's output before dropout.
        scores: the unnormalised, unmasked scores, when ``return_scores=True``.
        log_prob: ``(B, H, Tq)`` log-probability of the sampled key (``normaliser="sample"``).
        cache: the updated key/value cache (:class:`MultiHeadAttention` with ``use_cache``).
        path: which kernel ran and, for the readable path, why.
        centres: ``(B, Tq)`` the window centres ``p_t`` of :class:`LocalAttention`
            (Luong et al. 2015, §3.2: ``p_t = t`` for local-m, eq. (9) for local-p).
    """

    context: Tensor
    weights: Tensor | None = None
    scores: Tensor | None = None
    log_prob: Tensor | None = None
    cache: object | None = None
    path: str = ""
    centres: Tensor | None = None
