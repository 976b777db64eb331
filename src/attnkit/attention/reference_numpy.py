"""Attention in plain NumPy, one step per function, written to be read.

This is the readable twin of :func:`attnkit.attention.attend` and
:class:`attnkit.attention.MultiHeadAttention`; the tests check that both give the same numbers.
The four steps of every attention layer are (Vaswani et al. 2017, eq. (1); Bahdanau et al.
2015, eqs. (5)-(6)):

1. **score**: how well each key matches each query -> ``scores (..., Tq, Tk)``;
2. **mask**: keys a query may not see get ``-inf``;
3. **normalise**: each row of scores becomes weights that sum to 1 (or 0 for a row with no key);
4. **weighted sum**: ``context = weights @ values`` -> ``(..., Tq, Dv)``.

Learned parameters are passed as a dict named like the PyTorch module's ``state_dict`` (for
example ``{"W.weight": ...}`` for :class:`~attnkit.attention.GeneralScore`), and a PyTorch
``nn.Linear`` computes ``y = x @ W.T + b``, so that is what :func:`linear` does here.
Leading batch axes (``...``) are allowed everywhere; a single sequence is ``(T, D)``.
Step 3, the normalisers, is :mod:`attnkit.attention.reference_numpy_normalisers` (its names are
re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# step 3, re-exported so that ``reference_numpy.<name>`` keeps working ("x as x" marks it)
from attnkit.attention.reference_numpy_normalisers import NORMALISERS as NORMALISERS
from attnkit.attention.reference_numpy_normalisers import entmax15_row as entmax15_row
from attnkit.attention.reference_numpy_normalisers import hard_row as hard_row
from attnkit.attention.reference_numpy_normalisers import normalise as normalise
from attnkit.attention.reference_numpy_normalisers import normalise_masked as normalise_masked
from attnkit.attention.reference_numpy_normalisers import softmax as softmax
from attnkit.attention.reference_numpy_normalisers import sparsemax_row as sparsemax_row

SCORES = ("dot", "scaled_dot", "general", "additive", "location")


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """``y = x W^T + b``, as ``torch.nn.Linear``: ``x (..., D_in)``, ``W (D_out, D_in)``."""
    y = x @ weight.T  # (..., D_out)
    return y if bias is None else y + bias


# ---------------------------------------------------------------- step 1: scores (..., Tq, Tk)


def dot_score(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``score(q, k) = q · k`` (Luong et al. 2015, eq. (8) "dot"); ``(.., Tq, D), (.., Tk, D)``."""
    return q @ np.swapaxes(k, -1, -2)  # (..., Tq, Tk)


def scaled_dot_score(q: np.ndarray, k: np.ndarray, scale: float | None = None) -> np.ndarray:
    """``q · k / sqrt(d_k)`` (Vaswani et al. 2017, eq. (1)); ``scale`` replaces ``1/sqrt(d_k)``."""
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    return dot_score(q, k) * scale  # (..., Tq, Tk)


def general_score(q: np.ndarray, k: np.ndarray, params: dict) -> np.ndarray:
    """Bilinear ``q^T W k`` (Luong et al. 2015, eq. (8) "general").

    ``params["W.weight"]`` has shape ``(Dq, Dk)``; the keys are projected first, ``k' = k W^T``
    ``(..., Tk, Dq)``, then dotted with the queries.
    """
    projected_keys = linear(k, params["W.weight"])  # (..., Tk, Dq)
    return dot_score(q, projected_keys)  # (..., Tq, Tk)


def additive_score(q: np.ndarray, k: np.ndarray, params: dict) -> np.ndarray:
    """``v^T tanh(W_k k + W_q q + b)`` (Bahdanau et al. 2015, App. A.1.2; Luong "concat").

    ``params``: ``W_key.weight (Dh, Dk)``, ``W_query.weight (Dh, Dq)``, ``W_query.bias (Dh,)``,
    ``v.weight (1, Dh)``. Every query is added to every key before the ``tanh``.
    """
    keys = linear(k, params["W_key.weight"])  # (..., Tk, Dh)
    queries = linear(q, params["W_query.weight"], params["W_query.bias"])  # (..., Tq, Dh)
    hidden = np.tanh(queries[..., :, None, :] + keys[..., None, :, :])  # (..., Tq, Tk, Dh)
    return linear(hidden, params["v.weight"])[..., 0]  # (..., Tq, Tk)


def location_score(q: np.ndarray, k: np.ndarray, params: dict) -> np.ndarray:
    """``W_a h_t`` from the query alone (Luong et al. 2015, eq. (9)), cut to the ``Tk`` keys.

    ``params``: ``W.weight (max_keys, Dq)`` and ``W.bias (max_keys,)``. The keys' content is
    never looked at, only their number.
    """
    tk = k.shape[-2]
    all_positions = linear(q, params["W.weight"], params["W.bias"])  # (..., Tq, max_keys)
    return all_positions[..., :tk]  # (..., Tq, Tk)


def compute_score(q, k, name: str = "scaled_dot", params: dict | None = None, scale=None):
    """Dispatch to the score called ``name`` (one of :data:`SCORES`)."""
    if name == "dot":
        return dot_score(q, k)
    if name == "scaled_dot":
        return scaled_dot_score(q, k, scale)
    learned = {"general": general_score, "additive": additive_score, "location": location_score}
    if name not in learned:
        raise ValueError(f"unknown score {name!r}; choose one of {SCORES}")
    if params is None:
        raise ValueError(f"score {name!r} has learned parameters: pass them as params=")
    return learned[name](q, k, params)


# ------------------------------------------------------------------------- step 2: the mask


def apply_mask(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Put ``-inf`` where ``mask`` is False (True = may attend), so ``exp`` gives weight 0."""
    if mask is None:
        return scores
    return np.where(mask, scores, -np.inf)  # (..., Tq, Tk)


# ------------------ step 3: the normalisers, row by row: see reference_numpy_normalisers.py


# ------------------------------------------------------------------ step 4: the weighted sum


def weighted_sum(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``c_i = sum_j a_ij v_j`` (Bahdanau et al. 2015, eq. (5)): ``(.., Tq, Tk) @ (.., Tk, Dv)``."""
    return weights @ values  # (..., Tq, Dv)


# ----------------------------------------------------------------------- all four together


@dataclass
class AttentionSteps:
    """Every intermediate of one attention call (shapes for a batch; drop ``...`` for one).

    Attributes:
        scores: ``(..., Tq, Tk)`` the raw score (``q · k`` for ``dot`` and ``scaled_dot``).
        scale: the factor applied to the raw scores (``1/sqrt(d_k)``), or ``None``.
        scaled_scores: ``scores * scale`` (the same as ``scores`` when ``scale`` is None).
        masked_scores: ``scaled_scores`` with ``-inf`` where the mask is False.
        weights: ``(..., Tq, Tk)`` the normaliser's output; a fully masked row is all zeros.
        context: ``(..., Tq, Dv)`` the weighted sum of the values.
    """

    score: str
    normaliser: str
    scores: np.ndarray
    scale: float | None
    scaled_scores: np.ndarray
    masked_scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray


def attention(
    q, k, v, mask=None, score: str = "scaled_dot", normaliser: str = "softmax", params=None
) -> AttentionSteps:
    """``context = normalise(mask(score(q, k))) @ v``, keeping every step.

    Args:
        q: ``(..., Tq, Dq)``; k: ``(..., Tk, Dk)``; v: ``(..., Tk, Dv)``.
        mask: bool, broadcastable to ``(..., Tq, Tk)``; True = may attend.
        score: one of :data:`SCORES`; normaliser: one of :data:`NORMALISERS`.
        params: the learned score's parameters, named as in its ``state_dict``.
    """
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    # For scaled_dot the raw score is q · k and the scaling is shown as its own step.
    raw = compute_score(q, k, "dot" if score == "scaled_dot" else score, params)  # (.., Tq, Tk)
    scale = 1.0 / np.sqrt(q.shape[-1]) if score == "scaled_dot" else None
    scaled = raw if scale is None else raw * scale
    masked = apply_mask(scaled, mask)
    weights = normalise_masked(masked, mask, normaliser)
    context = weighted_sum(weights, v)
    return AttentionSteps(score, normaliser, raw, scale, scaled, masked, weights, context)


# ------------------------------------------------------------------- multi-head attention


@dataclass
class MultiHeadSteps:
    """The intermediates of :func:`multi_head_attention` (``B`` batch, ``H`` heads).

    ``q, k, v``: projections before the split ``(B, T, D)``; ``q_heads`` etc.: ``(B, H, T, Dh)``;
    ``heads``: one :class:`AttentionSteps` per head; ``weights``: ``(B, H, Tq, Tk)``;
    ``concat``: ``(B, Tq, D)``; ``output``: ``concat W_O^T + b_O``, ``(B, Tq, D)``.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    q_heads: np.ndarray
    k_heads: np.ndarray
    v_heads: np.ndarray
    heads: list[AttentionSteps]
    weights: np.ndarray
    concat: np.ndarray
    output: np.ndarray


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """``(B, T, D) -> (B, H, T, D/H)``: head ``h`` gets features ``h*Dh .. (h+1)*Dh - 1``."""
    b, t, d = x.shape
    x = x.reshape(b, t, num_heads, d // num_heads)  # (B, T, H, Dh)
    return x.transpose(0, 2, 1, 3)  # (B, H, T, Dh)


def multi_head_attention(
    query,
    key,
    value,
    params: dict,
    num_heads: int,
    mask=None,
    score="scaled_dot",
    normaliser="softmax",
    kv_heads: int | None = None,
) -> MultiHeadSteps:
    """``MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W^O`` (Vaswani et al. 2017, §3.2.2).

    ``head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V)``. With ``kv_heads`` (grouped-query
    attention, Ainslie et al. 2023 §2.2; multi-query for 1, Shazeer 2019) the keys and values
    have ``kv_heads`` heads and query head ``h`` reads head ``h // (H / kv_heads)``, whose
    ``k_heads``/``v_heads`` are returned unrepeated. ``params`` is laid out as the
    ``state_dict`` of :class:`attnkit.attention.MultiHeadAttention`: ``q_proj.weight (D, D)``,
    ``q_proj.bias (D,)`` (biases may be absent), the same for ``k_proj``, ``v_proj``,
    ``out_proj``, and ``score.*`` for a learned score shared by the heads.

    Args:
        query: ``(B, Tq, D)``; key: ``(B, Tk, Dk)``; value: ``(B, Tk, Dv)``.
        mask: bool, broadcastable to ``(B, Tq, Tk)`` (every head) or ``(B, H, Tq, Tk)``.
    """
    query, key, value = (np.asarray(a, dtype=float) for a in (query, key, value))

    def project(x, name):
        return linear(x, params[f"{name}.weight"], params.get(f"{name}.bias"))

    q, k, v = project(query, "q_proj"), project(key, "k_proj"), project(value, "v_proj")
    q_heads = split_heads(q, num_heads)  # (B, H, Tq, Dh)
    kv_heads = num_heads if kv_heads is None else kv_heads
    group = num_heads // kv_heads  # query heads per key/value head
    k_heads = split_heads(k, kv_heads)  # (B, H_kv, Tk, Dh)
    v_heads = split_heads(v, kv_heads)  # (B, H_kv, Tk, Dh)
    score_params = {n[len("score.") :]: p for n, p in params.items() if n.startswith("score.")}
    heads = []
    for h in range(num_heads):
        head_mask = mask
        if mask is not None and np.ndim(mask) == 4:  # (B, H or 1, Tq, Tk): this head's slice
            head_mask = np.asarray(mask)[:, h if np.shape(mask)[1] > 1 else 0]  # (B, Tq, Tk)
        qh, kh, vh = q_heads[:, h], k_heads[:, h // group], v_heads[:, h // group]  # (B, T, Dh)
        heads.append(attention(qh, kh, vh, head_mask, score, normaliser, score_params))
    weights = np.stack([head.weights for head in heads], axis=1)  # (B, H, Tq, Tk)
    concat = np.concatenate([head.context for head in heads], axis=-1)  # (B, Tq, D)
    output = project(concat, "out_proj")  # (B, Tq, D)
    return MultiHeadSteps(q, k, v, q_heads, k_heads, v_heads, heads, weights, concat, output)
