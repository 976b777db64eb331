"""Location-aware attention in plain NumPy, with loops, written to be read.

The readable twin of :class:`attnkit.attention.LocationAwareAttention` (Chorowski, Bahdanau,
Serdyuk, Cho & Bengio 2015, "Attention-Based Models for Speech Recognition", §2.1-2.3); the
tests check that both give the same numbers. One decoder step, one utterance at a time:

1. location features, eq. (8): ``f_i = F * alpha_{i-1}``, ``k`` filters of odd width ``r``,
   centred on each frame, frames beyond either end counting as weight 0;
2. scores, eq. (9): ``e_{i,j} = w^T tanh(W s_{i-1} + V h_j + U f_{i,j} + b)``;
3. weights, eq. (6) with sharpening ``beta`` (§2.3): ``alpha_{i,j} = exp(beta e_{i,j}) /
   sum_j' exp(beta e_{i,j'})`` over the unmasked frames, or smoothing (§2.3):
   ``sigma(beta e_{i,j}) / sum_j' sigma(beta e_{i,j'})``; masked frames get 0, and an
   utterance with no unmasked frame gets zeros;
4. context, eq. (2): ``g_i = sum_j alpha_{i,j} h_j``.

Parameters are a dict named as the module's ``state_dict``: ``score.W_query.weight (Dh, Dq)``
and ``score.W_query.bias (Dh,)`` (``W``, ``b``), ``score.W_key.weight (Dh, Dk)`` (``V``),
``score.v.weight (1, Dh)`` (``w``), ``conv.weight (k, 1, r)`` (``F``), ``U.weight (Dh, k)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def location_features(previous: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """Eq. (8), ``f_{j,l} = sum_m F_{l,m} alpha_{j + m - (r-1)/2}``: ``previous (S,)``,
    ``filters (k, 1, r)`` -> ``(S, k)``. A cross-correlation, as ``torch.nn.Conv1d``."""
    length = previous.shape[0]
    count, _, width = filters.shape
    half = (width - 1) // 2
    features = np.zeros((length, count))
    for j in range(length):
        for filt in range(count):
            for m in range(width):
                position = j + m - half
                if 0 <= position < length:  # beyond the ends: weight 0 (zero padding)
                    features[j, filt] += filters[filt, 0, m] * previous[position]
    return features


def location_aware_scores(
    state: np.ndarray, annotations: np.ndarray, previous: np.ndarray, params: dict
) -> np.ndarray:
    """Eq. (9) for one utterance, frame by frame: ``state`` ``s_{i-1}`` ``(Dq,)``,
    ``annotations`` ``h`` ``(S, Dk)``, ``previous`` ``alpha_{i-1}`` ``(S,)`` -> ``e_i (S,)``."""
    W, b = params["score.W_query.weight"], params["score.W_query.bias"]
    V, w = params["score.W_key.weight"], params["score.v.weight"][0]
    U = params["U.weight"]
    features = location_features(previous, params["conv.weight"])  # (S, k)
    scores = np.zeros(annotations.shape[0])
    for j in range(annotations.shape[0]):
        hidden = np.tanh(W @ state + V @ annotations[j] + U @ features[j] + b)  # (Dh,)
        scores[j] = w @ hidden
    return scores


def normalise_row(
    scores: np.ndarray, mask: np.ndarray, sharpening: float, normaliser: str
) -> np.ndarray:
    """Eq. (6) with ``beta`` (``"softmax"``) or §2.3's smoothing (``"smooth"``) over the
    frames where ``mask (S,)`` is True; 0 elsewhere, and all 0 when no frame is unmasked."""
    weights = np.zeros_like(scores)
    if not mask.any():
        return weights
    sharpened = sharpening * scores[mask]
    if normaliser == "softmax":
        unnormalised = np.exp(sharpened - sharpened.max())
    elif normaliser == "smooth":
        unnormalised = 1.0 / (1.0 + np.exp(-sharpened))
    else:
        raise ValueError(f"unknown normaliser {normaliser!r}; choose softmax or smooth")
    weights[mask] = unnormalised / unnormalised.sum()
    return weights


@dataclass
class LocationAwareSteps:
    """The intermediates of :func:`location_aware_attention` for a batch.

    ``features``: ``f_i`` ``(B, S, k)``; ``scores``: ``e_i`` ``(B, S)``, unmasked and before
    ``beta``; ``weights``: ``alpha_i`` ``(B, S)``; ``context``: ``g_i`` ``(B, Dv)``.
    """

    features: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray


def location_aware_attention(
    state,
    annotations,
    previous,
    params: dict,
    mask=None,
    values=None,
    sharpening: float = 1.0,
    normaliser: str = "softmax",
) -> LocationAwareSteps:
    """One step of Chorowski et al. 2015's attention, eqs. (2), (6), (8), (9), per utterance.

    Args:
        state: ``s_{i-1}`` ``(B, Dq)``; annotations: ``h`` ``(B, S, Dk)``; previous:
            ``alpha_{i-1}`` ``(B, S)``; mask: bool ``(B, S)``, True = may attend (default all);
            values: ``(B, S, Dv)``, default the annotations.
    """
    state, annotations, previous = (
        np.asarray(a, dtype=float) for a in (state, annotations, previous)
    )
    values = annotations if values is None else np.asarray(values, dtype=float)
    batch, length = previous.shape
    mask = np.ones((batch, length), bool) if mask is None else np.asarray(mask, dtype=bool)
    params = {name: np.asarray(p, dtype=float) for name, p in params.items()}
    features, scores, weights = [], np.zeros((batch, length)), np.zeros((batch, length))
    for b in range(batch):
        features.append(location_features(previous[b], params["conv.weight"]))  # (S, k)
        scores[b] = location_aware_scores(state[b], annotations[b], previous[b], params)
        weights[b] = normalise_row(scores[b], mask[b], sharpening, normaliser)
    context = np.stack([weights[b] @ values[b] for b in range(batch)])  # (B, Dv)
    return LocationAwareSteps(np.stack(features), scores, weights, context)
