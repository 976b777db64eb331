"""Score functions: how well does each key match the query?

Every score maps a query ``(B, H, Tq, Dq)`` and keys ``(B, H, Tk, Dk)`` to scores
``(B, H, Tq, Tk)``. Parameter-free scores are plain functions; learned scores are modules
(Luong et al. 2015, §3.1, eq. (8); Bahdanau et al. 2015, App. A.1.2; Vaswani et al. 2017, §3.2.1).

==============  =======================================  ==============================
name            score(q, k)                              reference
==============  =======================================  ==============================
``dot``         ``q · k``                                Luong 2015 eq. (8), "dot"
``scaled_dot``  ``q · k / sqrt(d_k)``                    Vaswani 2017 eq. (1)
``general``     ``q^T W k``  (bilinear)                  Luong 2015 eq. (8), "general"
``additive``    ``v^T tanh(W1 k + W2 q)``                Bahdanau 2015 App. A.1.2
                (``activation="relu"``: attention gate)  Oktay 2018 eq. (1)
``concat``      ``v^T tanh(W [q; k])`` (same as above)   Luong 2015 eq. (8), "concat"
``location``    ``W q`` (from the query alone)           Luong 2015 eq. (9)
==============  =======================================  ==============================
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

PARAMETER_FREE = ("dot", "scaled_dot")
LEARNED = ("general", "additive", "concat", "location")


def dot_score(query: Tensor, key: Tensor) -> Tensor:
    """``score(q, k) = q · k`` (Luong et al. 2015, eq. (8), "dot").

    Shapes: ``(..., Tq, D)`` x ``(..., Tk, D)`` -> ``(..., Tq, Tk)``.
    """
    return query @ key.transpose(-2, -1)  # (..., Tq, Tk)


def scaled_dot_score(query: Tensor, key: Tensor, scale: float | None = None) -> Tensor:
    """``score(q, k) = q · k / sqrt(d_k)`` (Vaswani et al. 2017, eq. (1)).

    Scaling keeps the variance of the scores near 1 when q and k have unit-variance entries,
    so the softmax does not saturate. ``scale`` overrides ``1 / sqrt(d_k)``.
    """
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    return (query @ key.transpose(-2, -1)) * scale  # (..., Tq, Tk)


class GeneralScore(nn.Module):
    """Bilinear score ``q^T W k`` (Luong et al. 2015, eq. (8), "general").

    The keys are projected once, ``k' = W k`` with ``W: (Dq, Dk)``, then dotted with the query,
    so the cost per query is that of ``dot``.
    """

    def __init__(self, d_query: int, d_key: int | None = None) -> None:
        super().__init__()
        self.W = nn.Linear(d_key or d_query, d_query, bias=False)

    def prepare_key(self, key: Tensor) -> Tensor:
        """``W k``, ``(..., Tk, Dq)``: computed once per source sentence when decoding."""
        return self.W(key)

    def score_prepared(self, query: Tensor, prepared: Tensor) -> Tensor:
        return query @ prepared.transpose(-2, -1)  # (..., Tq, Tk)

    def forward(self, query: Tensor, key: Tensor) -> Tensor:
        return self.score_prepared(query, self.prepare_key(key))


class AdditiveScore(nn.Module):
    """Additive (concat) score ``v^T act(W1 k + W2 q + b) (+ b_v)``; by default ``act = tanh``.

    Bahdanau et al. 2015, App. A.1.2: ``e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)``; Luong et al.
    2015 eq. (8) "concat" ``v_a^T tanh(W_a [h_t; h_s])`` is the same function with ``W_a``
    split into its query and key halves. The defaults are Bahdanau's.

    The options make it the attention gate of Oktay et al. 2018, eq. (1):
    ``q_att = psi^T relu(W_x^T x + W_g^T g + b_g) + b_psi`` with the gating signal ``g`` as the
    query and the skip features ``x`` as the key: ``activation="relu"`` (their ``sigma_1``),
    ``out_bias=True`` (``b_psi``); ``b_g`` is the query bias, always present; ``key_bias=True``
    adds a bias to ``W_x`` as MONAI's ``AttentionBlock`` has (it is redundant with ``b_g``).
    :meth:`score_paired` scores each query against the key at its own position only.
    """

    ACTIVATIONS = ("tanh", "relu")

    def __init__(
        self,
        d_query: int,
        d_key: int | None = None,
        d_hidden: int | None = None,
        *,
        activation: str = "tanh",
        key_bias: bool = False,
        out_bias: bool = False,
    ):
        super().__init__()
        if activation not in self.ACTIVATIONS:
            raise ValueError(
                f"unknown additive-score activation {activation!r}; choose one of "
                f"{self.ACTIVATIONS} (tanh: Bahdanau 2015, relu: Oktay 2018)"
            )
        d_key = d_key or d_query
        d_hidden = d_hidden or d_query
        self.activation = activation
        self.W_key = nn.Linear(d_key, d_hidden, bias=key_bias)  # U_a (Oktay: W_x)
        self.W_query = nn.Linear(d_query, d_hidden, bias=True)  # W_a, bias folded in (W_g, b_g)
        self.v = nn.Linear(d_hidden, 1, bias=out_bias)  # v_a (Oktay: psi, b_psi)

    def prepare_key(self, key: Tensor, *, channels_first: bool = False) -> Tensor:
        """``U_a h_j``, ``(..., Tk, Dh)``: it does not depend on the decoder state, so a decoder
        computes it once per source sentence (Bahdanau et al. 2015, App. A.1.2, last note).
        ``channels_first``: ``(B, Dk, T) -> (B, Dh, T)`` (see :meth:`score_paired`)."""
        return _positionwise(self.W_key, key, channels_first)

    def prepare_query(self, query: Tensor, *, channels_first: bool = False) -> Tensor:
        """``W_a s + b``, ``(..., Tq, Dh)``; ``channels_first``: ``(B, Dq, T) -> (B, Dh, T)``."""
        return _positionwise(self.W_query, query, channels_first)

    def _activate_(self, hidden: Tensor) -> Tensor:
        # in place on a fresh sum: one buffer, not two (autograd is fine: the sum's backward
        # needs no saved output, tanh's and relu's save their own)
        return hidden.tanh_() if self.activation == "tanh" else hidden.relu_()

    def score_prepared(self, query: Tensor, prepared: Tensor) -> Tensor:
        """``query (..., Tq, Dq)`` against ``prepare_key(key) (..., Tk, Dh)`` -> ``(..., Tq, Tk)``.

        Without autograd, a large batch is scored :data:`CHUNK_BYTES` of the ``(..., Tq, Tk,
        Dh)`` hidden layer at a time: every step is per row, so the numbers are the same (up
        to the last bit of ``v``'s matrix-vector product, whose kernel may round differently
        for fewer rows; bit for bit in the beam benchmark). In a beam search step (570 rows,
        35 keys, ``Dh = 512``) this took 24 ms instead of 42 ms, the temporaries staying in the
        cache. Training is not chunked (the weight gradient would be summed in another order)."""
        k = prepared.unsqueeze(-3)  # (..., 1, Tk, Dh)
        q = self.prepare_query(query).unsqueeze(-2)  # (..., Tq, 1, Dh)
        rows = _chunk_rows(q, k)
        if rows is None:
            return self._hidden_to_score(q, k)
        chunks = [
            self._hidden_to_score(q[i : i + rows], k[i : i + rows])
            for i in range(0, q.size(0), rows)
        ]
        return torch.cat(chunks)  # (..., Tq, Tk)

    def _hidden_to_score(self, q: Tensor, k: Tensor) -> Tensor:
        return self.v(self._activate_(q + k)).squeeze(-1)  # (..., Tq, Tk, Dh) -> (..., Tq, Tk)

    def forward(self, query: Tensor, key: Tensor) -> Tensor:
        return self.score_prepared(query, self.prepare_key(key))

    def score_paired(self, query: Tensor, key: Tensor, *, channels_first: bool = False) -> Tensor:
        """Each query scored against the key at its own position only: ``(..., T, Dq)`` x
        ``(..., T, Dk)`` -> ``(..., T)``, ``e_t = v^T act(W_q q_t + b + W_k k_t)``.

        The diagonal of :meth:`forward`'s ``(..., T, T)`` matrix without computing the rest,
        as in an attention gate, whose query is the gating signal at the same pixel (Oktay et
        al. 2018, eq. (1)). The leading axes broadcast. ``channels_first=True`` takes
        ``(B, Dq, T)`` and ``(B, Dk, T)`` instead, a feature map flattened without a transposing
        copy, and applies each linear map as a 1x1 convolution (the same numbers; 2x faster on
        CPU than ``Linear`` on the transposed view at ``T = 128*128``).
        """
        prepared_query = self.prepare_query(query, channels_first=channels_first)
        prepared_key = self.prepare_key(key, channels_first=channels_first)
        return self.score_paired_prepared(
            prepared_query, prepared_key, channels_first=channels_first
        )

    def score_paired_prepared(
        self, prepared_query: Tensor, prepared_key: Tensor, *, channels_first: bool = False
    ) -> Tensor:
        """:meth:`score_paired` from the projections, ``(..., T, Dh)`` each (``(B, Dh, T)``
        with ``channels_first``) -> ``(..., T)``.

        Lets a caller act on ``W_q q`` and ``W_k k`` in between, e.g. normalise them per
        channel (MONAI's ``AttentionBlock`` puts a BatchNorm after each projection).
        """
        hidden = self._activate_(prepared_query + prepared_key)  # (..., T, Dh) or (B, Dh, T)
        return _positionwise(self.v, hidden, channels_first).squeeze(-2 if channels_first else -1)


CHUNK_BYTES = 4 * 2**20  # the additive score's hidden layer per chunk, in inference


def _chunk_rows(q: Tensor, k: Tensor) -> int | None:
    """Rows of the leading axis per chunk of the additive score's ``q + k``, or None for one
    piece (autograd on, no shared leading axis, or small enough)."""
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad):
        return None
    if q.dim() < 4 or q.size(0) != k.size(0):
        return None
    shape = torch.broadcast_shapes(q.shape, k.shape)  # (N, ..., Tq, Tk, Dh)
    row_bytes = math.prod(shape[1:]) * q.element_size()
    rows = max(1, CHUNK_BYTES // max(row_bytes, 1))
    return None if rows >= q.size(0) else rows


def _positionwise(linear: nn.Linear, x: Tensor, channels_first: bool) -> Tensor:
    """``linear`` at every position: of ``(..., T, D_in)``, or of ``(B, D_in, T)`` as a 1x1
    convolution when ``channels_first`` (``-> (B, D_out, T)``)."""
    if not channels_first:
        return linear(x)
    return F.conv1d(x, linear.weight.unsqueeze(-1), linear.bias)  # (B, D_out, T)


class LocationScore(nn.Module):
    """Location-based score ``a_t = softmax(W_a h_t)``: computed from the query alone.

    Luong et al. 2015, eq. (9). ``W_a`` has one row per source position, so the layer needs the
    longest source length it will see, ``max_keys``; the scores are cut to the actual ``Tk``.
    """

    def __init__(self, d_query: int, max_keys: int) -> None:
        super().__init__()
        self.max_keys = max_keys
        self.W = nn.Linear(d_query, max_keys)

    def prepare_key(self, key: Tensor) -> Tensor:
        return key  # only the keys' number matters

    def score_prepared(self, query: Tensor, prepared: Tensor) -> Tensor:
        return self(query, prepared)

    def forward(self, query: Tensor, key: Tensor) -> Tensor:
        tk = key.size(-2)
        if tk > self.max_keys:
            raise ValueError(
                f"location score was built for at most max_keys={self.max_keys} keys, "
                f"got {tk}; build LocationScore with a larger max_keys"
            )
        return self.W(query)[..., :tk]  # (..., Tq, Tk)


def build_score(name: str, d_query: int, d_key: int | None = None, **options) -> nn.Module:
    """Factory for the learned scores by name (``general``, ``additive``/``concat``, ``location``).

    ``options`` go to the constructor (``d_hidden``, ``activation``, ``key_bias``, ``out_bias``
    for additive, ``max_keys`` for location).
    """
    if name == "general":
        return GeneralScore(d_query, d_key)
    if name in ("additive", "concat"):
        extra = {k: options[k] for k in ("activation", "key_bias", "out_bias") if k in options}
        return AdditiveScore(d_query, d_key, options.get("d_hidden"), **extra)
    if name == "location":
        if "max_keys" not in options:
            raise ValueError("score 'location' needs max_keys (the longest source length)")
        return LocationScore(d_query, options["max_keys"])
    raise ValueError(f"unknown learned score {name!r}; choose one of {LEARNED}")


def resolve_score(score, scale: float | None = None):
    """Turn ``score`` (a name or a callable) into a callable ``(q, k) -> scores``."""
    if callable(score):
        return score
    if score == "dot":
        return dot_score
    if score == "scaled_dot":
        return lambda q, k: scaled_dot_score(q, k, scale)
    if score in LEARNED:
        raise ValueError(
            f"score {score!r} has learned parameters: build it with "
            f"attnkit.attention.build_score({score!r}, d_query, d_key) (or use its layer) "
            "and pass the module as score="
        )
    raise ValueError(f"unknown score {score!r}; choose one of {PARAMETER_FREE + LEARNED}")
