"""Normalisers: turn scores ``(..., Tk)`` into attention weights over the keys.

Masked keys arrive as ``-inf`` and must get weight exactly 0; every normaliser here does that.

=============  ====================================================  ===========================
name           what it returns                                       reference
=============  ====================================================  ===========================
``softmax``    dense probabilities                                   Bahdanau et al. 2015 eq. (6)
``sparsemax``  Euclidean projection onto the simplex (exact zeros)   Martins & Astudillo 2016
``entmax15``   1.5-entmax, between softmax and sparsemax             Peters et al. 2019
``hard``       one-hot argmax, straight-through softmax gradient     Bengio et al. 2013
``gumbel``     Gumbel-softmax sample (``hard=True``: one-hot, ST)    Jang et al. 2017
``sample``     one-hot categorical sample and its log-probability   Xu et al. 2015 §4.1
``sigmoid``    independent gates ``sigmoid(s_i)`` in [0, 1]         Oktay et al. 2018 eq. (2)
=============  ====================================================  ===========================

All but ``sigmoid`` make the keys compete: their weights sum to 1. ``sigmoid`` weighs each key
on its own ("sigmoid gating", as in the attention gates of the Attention U-Net), so its
weights need not sum to 1, and a row of masked keys gives zeros with no special case.

A normaliser is a function ``scores -> weights``. A stochastic normaliser that a REINFORCE
estimator needs (``sample``) returns ``(weights, log_prob)``; :func:`attnkit.attention.attend`
puts the log-probability into :attr:`AttentionOutput.log_prob`.
"""

from __future__ import annotations

from collections.abc import Callable

import entmax
import torch
from torch import Tensor


def softmax(scores: Tensor) -> Tensor:
    """``a_i = exp(s_i) / sum_j exp(s_j)`` (Bahdanau et al. 2015, eq. (6))."""
    return torch.softmax(scores, dim=-1)


def sparsemax(scores: Tensor) -> Tensor:
    """``argmin_p ||p - s||^2`` over the simplex (Martins & Astudillo 2016, eq. (2)).

    Uses the ``entmax`` package's sort-based forward and its exact backward.
    """
    return entmax.sparsemax(scores, dim=-1)


def entmax15(scores: Tensor) -> Tensor:
    """1.5-entmax (Peters, Niculae & Martins 2019, eq. (10)); sparse but smoother than sparsemax."""
    return entmax.entmax15(scores, dim=-1)


def hard(scores: Tensor) -> Tensor:
    """One-hot argmax in the forward pass, softmax gradient in the backward pass.

    Straight-through estimator (Bengio, Léonard & Courville 2013): ``y = onehot + p - sg(p)``,
    whose value is the one-hot vector and whose gradient is that of the softmax ``p``.
    """
    return _straight_through(torch.softmax(scores, dim=-1))


def _straight_through(soft: Tensor) -> Tensor:
    """The one-hot argmax of ``soft`` as value, the gradient of ``soft`` as gradient.

    ``soft - soft.detach()`` is exactly zero, so the value is exactly one-hot.
    """
    index = soft.argmax(dim=-1, keepdim=True)  # (..., 1)
    one_hot = torch.zeros_like(soft).scatter_(-1, index, 1.0)
    return one_hot + (soft - soft.detach())


def gumbel(
    scores: Tensor, tau: float = 1.0, hard: bool = True, generator: torch.Generator | None = None
) -> Tensor:
    """Gumbel-softmax ``softmax((s + g) / tau)``, ``g ~ Gumbel(0, 1)`` (Jang et al. 2017, eq. (1)).

    With ``hard=True`` the forward value is the one-hot argmax of the sample and the gradient is
    that of the relaxed sample (straight-through Gumbel). Masked keys (``-inf``) are never chosen.
    """
    if tau <= 0:
        raise ValueError(f"gumbel temperature tau must be > 0, got {tau}")
    uniform = torch.rand(scores.shape, generator=generator, dtype=scores.dtype).to(scores.device)
    g = -torch.log((-torch.log(uniform.clamp_min(1e-20))).clamp_min(1e-20))  # Gumbel(0, 1)
    soft = torch.softmax((scores + g) / tau, dim=-1)
    return _straight_through(soft) if hard else soft


def sample(scores: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Stochastic hard attention: draw one key ``s ~ Categorical(softmax(scores))``.

    Xu et al. 2015, §4.1: the location variable is sampled from the attention distribution and
    the model is trained with the REINFORCE estimator, whose gradient is
    ``(reward - baseline) * d log p(s) / d theta``. So this returns the one-hot weights (no
    gradient) and ``log p(s)``, shape ``(...)``, through which the gradient flows.
    """
    probs = torch.softmax(scores, dim=-1)
    flat = probs.reshape(-1, probs.size(-1))  # (N, Tk)
    index = torch.multinomial(flat.detach(), 1, generator=generator)  # (N, 1)
    index = index.reshape(*probs.shape[:-1], 1)  # (..., 1)
    weights = torch.zeros_like(probs).scatter_(-1, index, 1.0)
    log_prob = torch.log_softmax(scores, dim=-1).gather(-1, index).squeeze(-1)  # (...)
    return weights, log_prob


def sigmoid(scores: Tensor) -> Tensor:
    """``a_i = 1 / (1 + exp(-s_i))``, each key on its own (Oktay et al. 2018, eq. (2)).

    "Sigmoid gating": the weights do not compete (they need not sum to 1), which Oktay et al.
    choose over a softmax so that several regions can be kept at once. ``sigmoid(-inf)`` is
    exactly 0, so masked keys get weight 0. Any shape.
    """
    return torch.sigmoid(scores)


NORMALISERS: dict[str, Callable] = {
    "softmax": softmax,
    "sparsemax": sparsemax,
    "entmax15": entmax15,
    "hard": hard,
    "gumbel": gumbel,
    "sample": sample,
    "sigmoid": sigmoid,
}


def resolve_normaliser(normaliser, options: dict | None = None) -> Callable:
    """Turn a name or callable into ``scores -> weights`` (or ``(weights, log_prob)``)."""
    options = dict(options or {})
    if callable(normaliser):
        fn = normaliser
    elif normaliser in NORMALISERS:
        fn = NORMALISERS[normaliser]
    else:
        raise ValueError(f"unknown normaliser {normaliser!r}; choose one of {tuple(NORMALISERS)}")
    if not options:
        return fn
    return lambda scores: fn(scores, **options)


def reinforce_loss(log_prob: Tensor, reward: Tensor, baseline: Tensor | float = 0.0) -> Tensor:
    """Surrogate loss whose gradient is the REINFORCE estimator (Williams 1992; Xu et al. 2015).

    ``loss = -(reward - baseline).detach() * log_prob``, averaged. ``reward`` broadcasts against
    ``log_prob``; a running-average ``baseline`` reduces the variance (Xu et al. 2015 eq. (12)).
    """
    advantage = (reward - baseline).detach()
    return -(advantage * log_prob).mean()


__all__ = [
    "NORMALISERS",
    "entmax15",
    "gumbel",
    "hard",
    "reinforce_loss",
    "resolve_normaliser",
    "sample",
    "sigmoid",
    "softmax",
    "sparsemax",
]
