"""Coverage attention and the pointer-generator's mixture in plain NumPy, with loops.

The readable twins of :class:`attnkit.attention.CoverageAttention`,
:func:`attnkit.attention.coverage_loss` and :func:`attnkit.attention.pointer_mixture` (See, Liu
& Manning 2017, "Get To The Point: Summarization with Pointer-Generator Networks", §2.1-2.3);
the tests check that both give the same numbers. One decoder step, one article at a time:

1. scores, eq. (11): ``e_i = v^T tanh(W_h h_i + W_s s_t + w_c c_i + b_attn)`` (eq. (1)
   without ``w_c``);
2. weights, eq. (2): ``a_i = exp(e_i) / sum_i' exp(e_i')`` over the unmasked positions; masked
   positions get 0, and an article with no unmasked position gets zeros;
3. context, eq. (3): ``h*_t = sum_i a_i h_i``;
4. coverage loss, eq. (12): ``sum_i min(a_i, c_i)``;
5. final distribution, eq. (9): ``P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i``.

Parameters are a dict named as the module's ``state_dict``: ``score.W_query.weight (Dh, Dq)``
and ``score.W_query.bias (Dh,)`` (``W_s``, ``b_attn``), ``score.W_key.weight (Dh, Dk)``
(``W_h``), ``score.v.weight (1, Dh)`` (``v``) and, with coverage, ``w_c.weight (Dh, 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def coverage_scores(
    state: np.ndarray, annotations: np.ndarray, coverage: np.ndarray, params: dict
) -> np.ndarray:
    """Eq. (11) for one article, position by position: ``state`` ``s_t`` ``(Dq,)``,
    ``annotations`` ``h`` ``(S, Dk)``, ``coverage`` ``c^t`` ``(S,)`` -> ``e^t (S,)``."""
    W_s, b_attn = params["score.W_query.weight"], params["score.W_query.bias"]
    W_h, v = params["score.W_key.weight"], params["score.v.weight"][0]
    w_c = params["w_c.weight"][:, 0] if "w_c.weight" in params else None
    scores = np.zeros(annotations.shape[0])
    for i in range(annotations.shape[0]):
        hidden = W_h @ annotations[i] + W_s @ state + b_attn  # (Dh,)
        if w_c is not None:
            hidden = hidden + w_c * coverage[i]
        scores[i] = v @ np.tanh(hidden)
    return scores


def softmax_row(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Eq. (2) over the positions where ``mask (S,)`` is True; 0 elsewhere, all 0 if none."""
    weights = np.zeros_like(scores)
    if not mask.any():
        return weights
    unnormalised = np.exp(scores[mask] - scores[mask].max())
    weights[mask] = unnormalised / unnormalised.sum()
    return weights


@dataclass
class CoverageSteps:
    """The intermediates of :func:`coverage_attention_numpy` for a batch: ``scores`` ``e^t``
    ``(B, S)`` (unmasked), ``weights`` ``a^t`` ``(B, S)``, ``context`` ``h*_t`` ``(B, Dv)``."""

    scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray


def coverage_attention_numpy(
    state, annotations, coverage, params: dict, mask=None, values=None
) -> CoverageSteps:
    """One step of See et al. 2017's attention, eqs. (2), (3), (11), article by article.

    Args:
        state: ``s_t`` ``(B, Dq)``; annotations: ``h`` ``(B, S, Dk)``; coverage: ``c^t``
            ``(B, S)`` (ignored when ``params`` has no ``w_c.weight``); mask: bool ``(B, S)``,
            True = may attend (default all); values: ``(B, S, Dv)``, default the annotations.
    """
    state, annotations, coverage = (
        np.asarray(a, dtype=float) for a in (state, annotations, coverage)
    )
    values = annotations if values is None else np.asarray(values, dtype=float)
    batch, length = coverage.shape
    mask = np.ones((batch, length), bool) if mask is None else np.asarray(mask, dtype=bool)
    params = {name: np.asarray(p, dtype=float) for name, p in params.items()}
    scores, weights = np.zeros((batch, length)), np.zeros((batch, length))
    context = np.zeros((batch, values.shape[-1]))
    for b in range(batch):
        scores[b] = coverage_scores(state[b], annotations[b], coverage[b], params)
        weights[b] = softmax_row(scores[b], mask[b])
        for i in range(length):
            context[b] += weights[b, i] * values[b, i]  # eq. (3)
    return CoverageSteps(scores, weights, context)


def coverage_loss_numpy(weights, coverage, mask=None) -> np.ndarray:
    """Eq. (12), ``sum_i min(a_i, c_i)`` over the unmasked positions: ``(B, S)`` -> ``(B,)``."""
    weights, coverage = np.asarray(weights, dtype=float), np.asarray(coverage, dtype=float)
    mask = np.ones(weights.shape, bool) if mask is None else np.asarray(mask, dtype=bool)
    loss = np.zeros(weights.shape[0])
    for b in range(weights.shape[0]):
        for i in range(weights.shape[1]):
            if mask[b, i]:
                loss[b] += min(weights[b, i], coverage[b, i])
    return loss


def pointer_mixture_numpy(p_vocab, weights, source_ids, p_gen, n_extended: int) -> np.ndarray:
    """Eq. (9) for each article and each extended id ``w`` in turn: ``p_vocab (B, V)``,
    ``weights (B, S)``, ``source_ids (B, S)``, ``p_gen (B,)`` -> ``(B, V + n_extended)``."""
    p_vocab, weights = np.asarray(p_vocab, dtype=float), np.asarray(weights, dtype=float)
    source_ids, p_gen = np.asarray(source_ids), np.asarray(p_gen, dtype=float)
    batch, vocab = p_vocab.shape
    final = np.zeros((batch, vocab + n_extended))
    for b in range(batch):
        for w in range(vocab + n_extended):
            generated = p_vocab[b, w] if w < vocab else 0.0  # P_vocab is 0 on the OOV ids
            copied = sum(weights[b, i] for i in range(weights.shape[1]) if source_ids[b, i] == w)
            final[b, w] = p_gen[b] * generated + (1.0 - p_gen[b]) * copied
    return final
