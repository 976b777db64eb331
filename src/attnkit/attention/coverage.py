"""Coverage attention for summarization (See, Liu & Manning 2017, §2.3).

"Get To The Point: Summarization with Pointer-Generator Networks", ACL 2017. The decoder keeps
a coverage vector, the sum of its attention distributions so far, and feeds it to the score so
that it can see which source words it has already attended to, and is penalised for attending
to them again:

    c^t     = sum_{t'=0}^{t-1} a^{t'}      (c^0 = 0)                          eq. (10)
    e_i^t   = v^T tanh(W_h h_i + W_s s_t + w_c c_i^t + b_attn)                eq. (11)
    a^t     = softmax(e^t) over the unmasked source positions                 eq. (2)
    h*_t    = sum_i a_i^t h_i                                                  eq. (3)
    covloss_t = sum_i min(a_i^t, c_i^t)                                        eq. (12)

Without the coverage term, eq. (11) is eq. (1), Bahdanau's additive attention (See et al.'s
baseline): ``CoverageAttention(..., coverage=False)`` is exactly
:class:`~attnkit.attention.AdditiveAttention` with the same parameters.

The score is :class:`~attnkit.attention.AdditiveScore` (``W_s`` with ``b_attn`` its query
projection ``score.W_query``, ``W_h`` its key projection ``score.W_key``, ``v`` its ``score.v``)
with the coverage term folded into its prepared key, ``W_h h_i + w_c c_i^t``; ``w_c`` is a
``nn.Linear(1, Dh, bias=False)``. Mask, softmax, empty-row rule and weighted sum are
:func:`~attnkit.attention.attend`'s. One decoder step a call; the decoder loops, carrying the
coverage with :meth:`CoverageAttention.accumulate`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnkit.attention.functional import attend
from attnkit.attention.output import AttentionOutput
from attnkit.attention.scores import AdditiveScore


class CoverageAttention(nn.Module):
    """See et al. 2017's attention with coverage, eqs. (2), (3), (10), (11); one step a call.

    Args:
        d_query: width of the decoder state ``s_t``; d_key: of the encoder states ``h_i``
            (default ``d_query``); d_hidden: of the score's hidden layer (default ``d_query``).
        coverage: with True (default), the coverage term ``w_c c_i^t`` of eq. (11); with False
            there is no ``w_c`` and the layer is Bahdanau's additive attention, eq. (1).

    Parameters: ``score.W_query`` (``W_s`` and ``b_attn``), ``score.W_key`` (``W_h``),
    ``score.v`` (``v``) and, with coverage, ``w_c`` (weight ``(Dh, 1)``, PyTorch's default
    ``nn.Linear`` initialisation). A baseline's ``state_dict`` loads into a coverage layer
    with ``strict=False`` (only ``w_c.weight`` is missing), See et al.'s way of adding coverage
    to a trained model for a last phase of training (§5).
    """

    def __init__(
        self,
        d_query: int,
        d_key: int | None = None,
        d_hidden: int | None = None,
        *,
        coverage: bool = True,
    ) -> None:
        super().__init__()
        d_hidden = d_hidden or d_query
        self.score = AdditiveScore(d_query, d_key, d_hidden)  # W_s, b_attn, W_h, v of eq. (11)
        self.w_c = nn.Linear(1, d_hidden, bias=False) if coverage else None  # w_c, eq. (11)

    @property
    def coverage(self) -> bool:
        """Whether the score has the coverage term ``w_c c_i^t`` (eq. (11)) or not (eq. (1))."""
        return self.w_c is not None

    def prepare_key(self, key: Tensor) -> Tensor:
        """``W_h h_i``, ``(B, S, Dh)`` from ``key (B, S, Dk)``: it does not depend on the step,
        so a decoder computes it once per source and passes it back as ``prepared_key``."""
        return self.score.prepare_key(key)

    @staticmethod
    def initial_coverage(mask: Tensor, dtype: torch.dtype | None = None) -> Tensor:
        """``c^0 = 0`` (eq. (10): no attention yet), ``(B, S)`` zeros shaped as ``mask (B, S)``,
        on its device, of ``dtype`` (default: the default float dtype)."""
        return torch.zeros(mask.shape, dtype=dtype or torch.get_default_dtype(), device=mask.device)

    @staticmethod
    def accumulate(coverage: Tensor, weights: Tensor) -> Tensor:
        """``c^{t+1} = c^t + a^t`` (eq. (10)): ``coverage (B, S)`` plus this step's ``weights``
        ``(B, S)`` or ``(B, 1, S)`` -> ``(B, S)``. Masked positions stay 0 (their weights are 0).
        Not detached: the gradient of the coverage loss reaches earlier steps, as in See et
        al.'s code; a caller who wants otherwise detaches."""
        return coverage + weights.reshape(coverage.shape)  # (B, 1, S) -> (B, S)

    def coverage_features(self, coverage: Tensor) -> Tensor:
        """``w_c c_i^t``, ``(B, S, Dh)``, from ``coverage (B, S)`` (eq. (11))."""
        return self.w_c(coverage.unsqueeze(-1))  # (B, S) -> (B, S, 1) -> (B, S, Dh)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        coverage: Tensor | None = None,
        prepared_key: Tensor | None = None,
    ) -> AttentionOutput:
        """One step: ``query`` ``s_t`` ``(B, Dq)``, ``key`` ``h`` ``(B, S, Dk)``, ``value``
        ``(B, S, Dv)`` (default: key), ``mask`` ``(B, S)`` (True = may attend), ``coverage``
        ``c^t`` ``(B, S)``, ``prepared_key`` :meth:`prepare_key`'s output.

        ``coverage`` is required when the layer has coverage (a ValueError names the fix:
        :meth:`initial_coverage` at the first step); without coverage it is accepted and
        ignored, so one decoder loop carries it for the loss either way (eq. (1) does not
        read it).

        Returns :class:`AttentionOutput` with ``context`` ``h*_t`` ``(B, Dv)`` and ``weights``
        ``a^t`` ``(B, S)``, always (coverage needs them): 0 on masked positions, summing to 1
        (0 on a row with no position). A query ``(B, 1, Dq)``, with ``mask`` and ``coverage``
        ``(B, S)`` or ``(B, 1, S)``, gives ``(B, 1, Dv)`` and ``(B, 1, S)``.
        """
        one_step = query.dim() == 3
        query = query if one_step else query.unsqueeze(1)  # (B, 1, Dq)
        batch, length = query.size(0), key.size(1)
        if mask is not None:
            mask = mask.reshape(batch, 1, length)  # (B, 1, S)
        keys = self.prepare_key(key) if prepared_key is None else prepared_key  # (B, S, Dh)
        if self.w_c is not None:
            if coverage is None:
                raise ValueError(
                    "this CoverageAttention was built with coverage=True: pass coverage= "
                    "(B, S), the sum of the past steps' weights (eq. (10)); at the first step "
                    "CoverageAttention.initial_coverage(mask), or build it with coverage=False"
                )
            coverage = coverage.reshape(batch, length)  # (B, 1, S) -> (B, S)
            keys = keys + self.coverage_features(coverage)  # (B, S, Dh): W_h h_i + w_c c_i
        out = attend(
            query,
            keys,
            key if value is None else value,
            mask,
            score=self.score.score_prepared,
            normaliser="softmax",
            path="readable",
        )
        if not one_step:
            out.context = out.context.squeeze(1)  # (B, 1, Dv) -> (B, Dv)
            out.weights = out.weights.squeeze(1)  # (B, 1, S) -> (B, S)
        return out

    def extra_repr(self) -> str:
        return f"coverage={self.coverage}"


def coverage_loss(weights: Tensor, coverage: Tensor, mask: Tensor | None = None) -> Tensor:
    """See et al. 2017, eq. (12): ``covloss_t = sum_i min(a_i^t, c_i^t)``, per row.

    ``weights`` ``a^t`` and ``coverage`` ``c^t`` ``(B, S)`` (or any ``(..., S)``, the same
    shape) -> ``(...)``, e.g. ``(B,)``. ``mask`` ``(..., S)``, True = may attend: masked
    positions count 0 (their weights are 0 anyway, so it only guards a caller's stray mass).
    Bounded by 1 when the weights sum to 1. The step average and the weight ``lambda`` of
    eq. (13) (1 in the paper) are the caller's, as is masking the decoder's padded steps.
    """
    overlap = torch.minimum(weights, coverage)  # (..., S)
    if mask is not None:
        overlap = overlap.masked_fill(~mask, 0.0)
    return overlap.sum(-1)  # (...)
