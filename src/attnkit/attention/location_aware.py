"""Location-aware attention for speech (Chorowski, Bahdanau, Serdyuk, Cho & Bengio 2015).

"Attention-Based Models for Speech Recognition", §2.2: the content-based score of eq. (5)
(Bahdanau's additive score) gets a third term from the previous step's weights, so that the
decoder can tell two identical frames apart by where it attended last:

    f_i     = F * alpha_{i-1}                                   eq. (8), k filters of width r
    e_{i,j} = w^T tanh(W s_{i-1} + V h_j + U f_{i,j} + b)       eq. (9)
    alpha_i = softmax(beta e_i) over the unmasked frames         eq. (6), sharpening beta (§2.3)
    g_i     = sum_j alpha_{i,j} h_j                             eq. (2)

Choices made here (the paper leaves them open):

- ``F * alpha`` is computed as ``torch.nn.Conv1d`` does, a cross-correlation
  ``f_{i,j,l} = sum_m F_{l,m} alpha_{i-1, j + m - (r-1)/2}``: for a learned ``F`` the flip of a
  true convolution only relabels the filter taps. ``r`` must be odd, so the filter is centred
  on frame ``j``; frames beyond either end count as weight 0 (zero padding), as do the padded
  frames of a batch (their weights are 0), so an utterance gets the same features alone as in
  a padded batch. ``F`` and ``U`` have no bias: ``b`` is the only one, in ``W s + b``.
- The step-0 weights ``alpha_0`` are the caller's: :meth:`LocationAwareAttention.initial_weights`
  gives the uniform start over the unmasked frames (``start="uniform"``, as ESPnet's ``AttLoc``)
  or zeros (``start="zeros"``: ``f_1 = 0``, so the first step is content-only attention).
- ``normaliser="smooth"`` is the paper's smoothing (§2.3), ``sigma(e_{i,j}) / sum_j
  sigma(e_{i,j})``, which spreads the weights over more frames than the softmax does;
  ``sharpening`` is ``beta`` (§2.3; 1 is plain eq. (6), ESPnet uses 2), applied to the scores
  before either normaliser. The paper's windowing (also §2.3) is not implemented.

The score is :class:`~attnkit.attention.AdditiveScore` (``W``, ``b``, ``V``, ``w`` named as
there) with the location term folded into its prepared key, ``V h_j + U f_{i,j}``; mask,
normaliser, empty-row rule and weighted sum are :func:`~attnkit.attention.attend`'s.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnkit.attention.functional import attend
from attnkit.attention.output import AttentionOutput
from attnkit.attention.scores import AdditiveScore

NORMALISERS = ("softmax", "smooth")
STARTS = ("uniform", "zeros")


def smooth(scores: Tensor) -> Tensor:
    """Smoothing (Chorowski et al. 2015, §2.3): ``a_j = sigma(e_j) / sum_k sigma(e_k)``.

    Masked keys arrive as ``-inf``, so ``sigma`` gives them 0. ``scores (..., Tk)``."""
    gates = torch.sigmoid(scores)  # (..., Tk)
    total = gates.sum(-1, keepdim=True).clamp_min(torch.finfo(gates.dtype).tiny)
    return gates / total


class LocationAwareAttention(nn.Module):
    """Chorowski et al. 2015's location-aware attention, eqs. (5)-(9), one decoder step a call.

    Args:
        d_query: width of the decoder state ``s_{i-1}``; d_key: of the encoder states ``h_j``
            (default ``d_query``); d_hidden: of the score's hidden layer (default ``d_query``).
        filters: ``k``, the number of location filters; width: ``r``, their width (odd).
            The defaults are the paper's TIMIT choice and ESPnet's ``AttLoc`` default.
        sharpening: ``beta`` > 0, multiplying the scores (§2.3); normaliser: ``"softmax"``
            (eq. (6)) or ``"smooth"`` (§2.3, :func:`smooth`).

    Parameters: ``score.W_query`` (``W`` and ``b``), ``score.W_key`` (``V``), ``score.v``
    (``w``), ``conv`` (``F``, weight ``(k, 1, r)``) and ``U`` (weight ``(Dh, k)``).
    """

    def __init__(
        self,
        d_query: int,
        d_key: int | None = None,
        d_hidden: int | None = None,
        *,
        filters: int = 10,
        width: int = 201,
        sharpening: float = 1.0,
        normaliser: str = "softmax",
    ) -> None:
        super().__init__()
        _check_options(filters, width, sharpening, normaliser)
        d_hidden = d_hidden or d_query
        self.score = AdditiveScore(d_query, d_key, d_hidden)  # W, b, V, w of eq. (9)
        self.conv = nn.Conv1d(1, filters, width, padding=width // 2, bias=False)  # F, eq. (8)
        self.U = nn.Linear(filters, d_hidden, bias=False)  # U, eq. (9)
        self.sharpening = sharpening
        self.normaliser = normaliser

    def prepare_key(self, key: Tensor) -> Tensor:
        """``V h_j``, ``(B, S, Dh)`` from ``key (B, S, Dk)``: it does not depend on the step, so
        a decoder computes it once per utterance and passes it back as ``prepared_key``."""
        return self.score.prepare_key(key)

    @staticmethod
    def initial_weights(
        mask: Tensor, start: str = "uniform", dtype: torch.dtype | None = None
    ) -> Tensor:
        """``alpha_0`` ``(B, S)`` from ``mask (B, S)`` (True = may attend): ``"uniform"``, 1 / the
        number of unmasked frames on each of them (0 on a row with none), or ``"zeros"``."""
        if start not in STARTS:
            raise ValueError(f"unknown start {start!r}; choose one of {STARTS}")
        weights = mask.to(dtype or torch.get_default_dtype())  # (B, S): 1 where unmasked
        if start == "zeros":
            return torch.zeros_like(weights)
        return weights / weights.sum(-1, keepdim=True).clamp_min(1.0)

    def location(self, previous: Tensor) -> Tensor:
        """``U f_{i,j}``, ``(B, S, Dh)``, from ``previous`` ``alpha_{i-1}`` ``(B, S)`` (eq. (8))."""
        f = self.conv(previous.unsqueeze(1))  # (B, 1, S) -> (B, k, S): f_i = F * alpha_{i-1}
        return self.U(f.transpose(1, 2))  # (B, S, k) -> (B, S, Dh)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        previous: Tensor,
        prepared_key: Tensor | None = None,
    ) -> AttentionOutput:
        """One step: ``query`` ``s_{i-1}`` ``(B, Dq)``, ``key`` ``h`` ``(B, S, Dk)``, ``value``
        ``(B, S, Dv)`` (default: key), ``mask`` ``(B, S)`` (True = may attend), ``previous``
        ``alpha_{i-1}`` ``(B, S)``, ``prepared_key`` :meth:`prepare_key`'s output.

        Returns :class:`AttentionOutput` with ``context`` ``g_i`` ``(B, Dv)`` and ``weights``
        ``alpha_i`` ``(B, S)``, always (the next step needs them): 0 on masked frames, summing
        to 1 (0 on a row with no frame). A query ``(B, 1, Dq)`` with ``mask`` and ``previous``
        ``(B, 1, S)``, as the other layers take a decoder step, gives ``(B, 1, Dv)`` and
        ``(B, 1, S)``.
        """
        one_step = query.dim() == 3
        query = query if one_step else query.unsqueeze(1)  # (B, 1, Dq)
        previous = previous.reshape(query.size(0), key.size(1))  # (B, S)
        if mask is not None:
            mask = mask.reshape(query.size(0), 1, key.size(1))  # (B, 1, S)
        prepared = self.prepare_key(key) if prepared_key is None else prepared_key  # (B, S, Dh)
        keys = prepared + self.location(previous)  # (B, S, Dh): V h_j + U f_{i,j}
        out = attend(
            query,
            keys,
            key if value is None else value,
            mask,
            score=self._sharpened_score,
            normaliser=smooth if self.normaliser == "smooth" else "softmax",
            path="readable",
        )
        if not one_step:
            out.context = out.context.squeeze(1)  # (B, 1, Dv) -> (B, Dv)
            out.weights = out.weights.squeeze(1)  # (B, 1, S) -> (B, S)
        return out

    def _sharpened_score(self, query: Tensor, keys: Tensor) -> Tensor:
        """``beta e_{i,j}`` of eq. (9) from ``query (.., 1, Dq)`` and ``keys = V h + U f``
        ``(.., S, Dh)`` -> ``(.., 1, S)``."""
        scores = self.score.score_prepared(query, keys)  # (.., 1, S)
        return scores if self.sharpening == 1.0 else scores * self.sharpening

    def extra_repr(self) -> str:
        k, _, r = self.conv.weight.shape
        return f"filters={k}, width={r}, sharpening={self.sharpening}, {self.normaliser}"


def _check_options(filters: int, width: int, sharpening: float, normaliser: str) -> None:
    """Clear errors for the constructor's options, naming what to change."""
    if filters < 1:
        raise ValueError(f"filters must be >= 1, got {filters}")
    if width < 1 or width % 2 == 0:
        raise ValueError(
            f"width must be odd and >= 1 (a filter centred on each frame), got {width}"
        )
    if not sharpening > 0:
        raise ValueError(f"sharpening (beta) must be > 0, got {sharpening}")
    if normaliser not in NORMALISERS:
        raise ValueError(
            f"unknown normaliser {normaliser!r}; choose one of {NORMALISERS} "
            "(softmax: eq. (6); smooth: sigmoid / sum of sigmoids, §2.3)"
        )
