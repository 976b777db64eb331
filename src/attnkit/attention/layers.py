"""Global attention layers for encoder-decoder models: a learned score plus :func:`attend`.

Each layer attends from decoder states ``query (B, Tq, Dq)`` (often ``Tq = 1``, one step) to
encoder states ``key (B, Tk, Dk)``; ``value`` defaults to ``key``, since in Bahdanau and Luong
attention the annotations are both what is scored and what is averaged.
"""

from __future__ import annotations

from torch import Tensor, nn

from attnkit.attention.functional import AttentionOutput, attend
from attnkit.attention.scores import AdditiveScore, GeneralScore, LocationScore


class _ScoredAttention(nn.Module):
    """A score (name or module) + a normaliser, applied through :func:`attend`."""

    score: nn.Module | str

    def __init__(self, normaliser: str = "softmax", normaliser_options: dict | None = None):
        super().__init__()
        self.normaliser = normaliser
        self.normaliser_options = normaliser_options

    def prepare_key(self, key: Tensor) -> Tensor:
        """The key-side part of the score, which a decoder computes once per source sentence
        and passes back as ``prepared_key`` at every step (see :meth:`forward`)."""
        return key if isinstance(self.score, str) else self.score.prepare_key(key)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        need_weights: bool = True,
        *,
        prepared_key: Tensor | None = None,
    ) -> AttentionOutput:
        """``query (B, Tq, Dq)``, ``key (B, Tk, Dk)``, ``value (B, Tk, Dv)`` (default: key).

        ``mask``: bool broadcastable to ``(B, Tq, Tk)``, True = may attend; for a source
        padding mask ``(B, Tk)`` pass ``mask[:, None, :]``. ``prepared_key``: the output of
        :meth:`prepare_key` for these keys, to skip recomputing it.
        """
        return attend(
            query,
            key if prepared_key is None else prepared_key,
            key if value is None else value,
            mask,
            score=self._score(prepared_key is not None),
            normaliser=self.normaliser,
            need_weights=need_weights,
            normaliser_options=self.normaliser_options,
        )

    def _score(self, prepared: bool):
        if not prepared or isinstance(self.score, str):
            return self.score
        return self.score.score_prepared


class AdditiveAttention(_ScoredAttention):
    """Bahdanau attention: ``e_ij = v^T tanh(W s_{i-1} + U h_j)``, ``a = softmax(e)``,
    ``c_i = sum_j a_ij h_j`` (Bahdanau et al. 2015, eqs. (5)-(6) and App. A.1.2).
    """

    def __init__(
        self, d_query: int, d_key: int | None = None, d_hidden: int | None = None, **kwargs
    ):
        super().__init__(**kwargs)
        self.score = AdditiveScore(d_query, d_key, d_hidden)


class MultiplicativeAttention(_ScoredAttention):
    """Luong global attention with ``method`` ``"dot"``, ``"general"`` or ``"concat"``.

    Luong et al. 2015, §3.1, eq. (8). ``dot`` needs ``d_query == d_key``; ``concat`` is the
    additive score of :class:`AdditiveAttention` with Luong's naming.
    """

    METHODS = ("dot", "general", "concat")

    def __init__(
        self,
        d_query: int,
        d_key: int | None = None,
        method: str = "general",
        d_hidden: int | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        d_key = d_key or d_query
        if method == "dot":
            if d_query != d_key:
                raise ValueError(
                    f"method 'dot' needs equal query and key widths, got {d_query} and {d_key}; "
                    "use method='general' to learn a projection between them"
                )
            self.score = "dot"
        elif method == "general":
            self.score = GeneralScore(d_query, d_key)
        elif method == "concat":
            self.score = AdditiveScore(d_query, d_key, d_hidden)
        else:
            raise ValueError(f"unknown Luong method {method!r}; choose one of {self.METHODS}")
        self.method = method


class LocationAttention(_ScoredAttention):
    """Luong location-based attention ``a_t = softmax(W_a h_t)`` (Luong et al. 2015, eq. (9)).

    The weights depend on the decoder state only, not on the encoder states' content;
    ``max_keys`` bounds the source length.
    """

    def __init__(self, d_query: int, max_keys: int, **kwargs):
        super().__init__(**kwargs)
        self.score = LocationScore(d_query, max_keys)
