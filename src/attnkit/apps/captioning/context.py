"""The context vector ``z_t`` of Show, Attend and Tell (Xu et al. 2015), per attention mode.

Every mode scores the annotations with the model's :class:`~attnkit.attention.AdditiveAttention`
(``e_ti = f_att(a_i, h_{t-1})``, eqs. (4)-(5)) through :func:`attnkit.attention.attend`; they
differ in how the scores become a context:

- ``soft``: the expectation ``sum_i alpha_ti a_i`` (§4.2, eq. (13));
- ``hard``: a sampled location, ``s_t ~ Multinoulli(alpha_t)``, ``z_t = a_{s_t}`` (§4.1,
  eqs. (8)-(9)), trained by REINFORCE (:mod:`.losses`); the most likely location when decoding;
- ``gumbel``: a relaxed alternative to REINFORCE: a straight-through Gumbel-softmax sample
  (Jang et al. 2017, eq. (1)) at the temperature ``tau`` the task anneals, one-hot forward,
  the relaxed sample's gradient backward; the most likely location when decoding;
- ``none``: no context (the decoder sees the image through its initial state only).
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnkit.attention import attend


def context(
    model,
    h: Tensor,
    annotations: Tensor,
    prepared,
    sample: bool,
    expect: Tensor | None = None,
    tau: float = 1.0,
):
    """``(z_t, alpha_t, beta_t, log p(s_t), H[alpha_t])`` of ``model`` for the state ``h (B, n)``.

    ``sample``: training (hard: draw ``s_t``; gumbel: draw a relaxed sample). Hard attention:
    ``expect (B,)`` bool marks the images whose context is the expectation this pass instead of
    a sample (Xu et al. §4.1); their ``log p(s_t)`` is 0, so REINFORCE leaves them alone.
    """
    mode = model.cfg.attention
    b, locations = annotations.shape[:2]
    if mode == "none":
        zeros = h.new_zeros(b, locations)
        return None, zeros, h.new_ones(b), None, h.new_zeros(b)
    query = h.unsqueeze(1)  # (B, 1, n)
    score = model.attention.score.score_prepared
    soft = attend(query, prepared, annotations, score=score)  # alpha_t and its expectation
    alpha, context, log_prob = soft.weights.squeeze(1), soft.context.squeeze(1), None  # (B, L)
    if mode == "hard":
        out = attend(
            query, prepared, annotations, score=score, normaliser="sample" if sample else "hard"
        )
        context = out.context.squeeze(1)  # (B, D): a_{s_t}
        log_prob = out.log_prob.squeeze(1) if out.log_prob is not None else None
        if expect is not None and log_prob is not None:
            context = torch.where(expect.unsqueeze(-1), soft.context.squeeze(1), context)
            log_prob = log_prob.masked_fill(expect, 0.0)
    elif mode == "gumbel":
        options = {"tau": tau, "hard": True} if sample else None
        out = attend(
            query,
            prepared,
            annotations,
            score=score,
            normaliser="gumbel" if sample else "hard",
            normaliser_options=options,
        )
        context = out.context.squeeze(1)  # (B, D): a_{s_t} forward, relaxed gradient
    entropy = -(alpha * torch.log(alpha.clamp_min(1e-12))).sum(-1)  # (B,)
    beta = torch.sigmoid(model.f_beta(h)).squeeze(-1) if model.f_beta is not None else None
    beta = beta if beta is not None else h.new_ones(b)
    return beta.unsqueeze(-1) * context, alpha, beta, log_prob, entropy
