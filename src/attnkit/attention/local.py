"""Local attention (Luong et al. 2015, §3.2): attend to a window ``[p_t - D, p_t + D]``.

- ``local-m`` (monotonic): ``p_t = t``, the window slides along with the target position.
- ``local-p`` (predictive): ``p_t = S * sigmoid(v_p^T tanh(W_p h_t))`` (eq. (9)) and the weights
  are multiplied by a Gaussian centred at ``p_t``,
  ``a_t(s) = align(h_t, h_s) exp(-(s - p_t)^2 / (2 sigma^2))``, ``sigma = D / 2`` (eq. (10)).

Positions are 0-based here; ``S`` is each source sentence's length.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnkit.attention.functional import AttentionOutput, attend
from attnkit.attention.masks import combine, window_mask
from attnkit.attention.scores import build_score

WINDOWS = ("local-m", "local-p")


class LocalAttention(nn.Module):
    """Luong local attention with any score and normaliser.

    Args:
        d_query, d_key: widths of decoder and encoder states.
        window: ``"local-m"`` or ``"local-p"``.
        half_width: ``D``; the window holds ``2D + 1`` source positions (Luong used D = 10).
        score: ``"dot"`` or a learned score name (``"general"``, ``"concat"``/``"additive"``).
        normaliser: any normaliser name of :func:`attend`.
    """

    def __init__(
        self,
        d_query: int,
        d_key: int | None = None,
        *,
        window: str = "local-p",
        half_width: int = 10,
        score: str = "general",
        normaliser: str = "softmax",
    ) -> None:
        super().__init__()
        if window not in WINDOWS:
            raise ValueError(f"unknown window {window!r}; choose one of {WINDOWS}")
        if half_width < 1:
            raise ValueError(f"half_width D must be >= 1 (sigma = D/2), got {half_width}")
        d_key = d_key or d_query
        if score == "dot" and d_query != d_key:
            raise ValueError("score 'dot' needs equal query and key widths; use 'general'")
        self.window, self.half_width, self.normaliser = window, half_width, normaliser
        self.score = score if score in ("dot", "scaled_dot") else build_score(score, d_query, d_key)
        if window == "local-p":
            self.W_p = nn.Linear(d_query, d_query, bias=False)  # W_p, eq. (9)
            self.v_p = nn.Linear(d_query, 1, bias=False)  # v_p, eq. (9)

    def prepare_key(self, key: Tensor) -> Tensor:
        """The key-side part of the score, computed once per source sentence."""
        return key if isinstance(self.score, str) else self.score.prepare_key(key)

    def centres(
        self, query: Tensor, source_lengths: Tensor | None, positions: Tensor | None, tk: int
    ) -> Tensor:
        """Window centres ``p_t``, ``(B, Tq)`` float."""
        b, tq, _ = query.shape
        if self.window == "local-m":
            if positions is None:
                positions = torch.arange(tq, device=query.device).expand(b, tq)  # (B, Tq)
            return positions.to(query.dtype)
        lengths = (
            torch.full((b,), tk, device=query.device) if source_lengths is None else source_lengths
        )
        gate = torch.sigmoid(self.v_p(torch.tanh(self.W_p(query)))).squeeze(-1)  # (B, Tq)
        return lengths.to(query.dtype).unsqueeze(-1) * gate  # p_t = S * sigmoid(.)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        source_lengths: Tensor | None = None,
        positions: Tensor | None = None,
        need_weights: bool = True,
        prepared_key: Tensor | None = None,
    ) -> AttentionOutput:
        """Attend locally from ``query (B, Tq, Dq)`` to ``key (B, Tk, Dk)``.

        Args:
            mask: bool broadcastable to ``(B, Tq, Tk)`` (e.g. source padding ``m[:, None, :]``).
            source_lengths: ``(B,)`` real source lengths ``S`` for local-p (default ``Tk``).
            positions: ``(B, Tq)`` target positions ``t`` for local-m (default ``0..Tq-1``;
                pass the step index when decoding one step at a time).
            prepared_key: :meth:`prepare_key` of ``key``, computed once per sentence.

        Returns:
            the attention output, with the window centres ``p_t (B, Tq)`` (eq. (9) for local-p)
            in ``output.centres``.
        """
        tk = key.size(1)
        p = self.centres(query, source_lengths, positions, tk)  # (B, Tq)
        in_window = window_mask(query.size(1), tk, p, half_width=self.half_width)  # (B, Tq, Tk)
        reweight = None
        if self.window == "local-p":
            sigma = self.half_width / 2
            s = torch.arange(tk, device=query.device, dtype=query.dtype)  # (Tk,)
            reweight = torch.exp(-((s - p.unsqueeze(-1)) ** 2) / (2 * sigma**2))  # (B, Tq, Tk)
        score = self.score
        if prepared_key is not None and not isinstance(score, str):
            score = score.score_prepared
        out = attend(
            query,
            key if prepared_key is None else prepared_key,
            key if value is None else value,
            combine(mask, in_window),
            score=score,
            normaliser=self.normaliser,
            need_weights=need_weights,
            reweight=reweight,
        )
        out.centres = p  # (B, Tq)
        return out
