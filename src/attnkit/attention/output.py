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
        path: which path ran: ``"fused"`` (``scaled_dot_product_attention`` in place of all
            four steps), ``"folded"`` (score and mask in one product, then the steps'
            normalise and weighted sum) or ``"readable"`` (the four steps as written).
        centres: ``(B, Tq)`` the window centres ``p_t`` of :class:`LocalAttention`
            (Luong et al. 2015, §3.2: ``p_t = t`` for local-m, eq. (9) for local-p).
        reason: why the fused kernel did not run (``""`` when it did), e.g.
            ``"weights were requested"``; :func:`attend_chunked` adds its chunking.
    """

    context: Tensor
    weights: Tensor | None = None
    scores: Tensor | None = None
    log_prob: Tensor | None = None
    cache: object | None = None
    path: str = ""
    centres: Tensor | None = None
    reason: str = ""
