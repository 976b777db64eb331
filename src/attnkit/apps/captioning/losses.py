"""The training loss of Show, Attend and Tell (Xu et al. 2015): cross-entropy, the doubly
stochastic penalty of soft attention (eq. (14)) and REINFORCE with an entropy bonus for hard
attention (eq. (12), §4.1). Shapes as in :mod:`attnkit.apps.captioning.model`.

REINFORCE's baseline ``b`` (:func:`baseline_values`) is one of

- ``moving``: the moving average of the reward, ``b <- 0.9 b + 0.1 r`` (Xu et al. §4.1);
- ``loo``: with ``k`` samples of each image, the mean reward of the image's *other* samples
  (Kool, van Hoof & Welling 2019, "Buy 4 REINFORCE samples, get a baseline for free!", eq. (9)):
  unbiased, as it does not depend on the sample it is subtracted from;
- ``learned``: a reward predicted from the image by a small head trained by least squares
  (Weaver & Tao 2001; Mnih & Gregor 2014's input-dependent baseline);
- ``none``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

if TYPE_CHECKING:
    from attnkit.apps.captioning.model import DecoderOutput


def doubly_stochastic_penalty(alpha: Tensor, step_mask: Tensor) -> Tensor:
    """``sum_i (1 - sum_t alpha_ti)^2`` per caption, over the real (unpadded) steps.

    Xu et al. 2015 §4.2.1, eq. (14). ``alpha (B, T, L)``, ``step_mask (B, T)`` bool -> ``(B,)``.
    """
    attended = (alpha * step_mask.unsqueeze(-1)).sum(dim=1)  # (B, L): sum_t alpha_ti
    return ((1.0 - attended) ** 2).sum(dim=-1)


def caption_loss(
    out: DecoderOutput,
    targets: Tensor,
    pad_id: int,
    *,
    penalty: float = 0.0,
    reinforce: float = 1.0,
    entropy: float = 0.0,
    baseline: float = 0.0,
    kind: str = "moving",
    samples: int = 1,
) -> tuple[Tensor, dict[str, float]]:
    """The training loss of one batch, per target token, and its parts for logging.

    - every mode: ``-log p(y | a)``, the token cross-entropy;
    - soft: ``+ penalty * sum_i (1 - sum_t alpha_ti)^2`` (Xu et al. eq. (14));
    - hard (``out.log_prob`` set): the REINFORCE term of eq. (12), with the reward
      ``log p(y | s, a)`` of each caption and the baseline ``b`` of ``kind``
      (:func:`baseline_values`; ``baseline`` is the moving average, ``samples`` the captions
      per image, consecutive in the batch), ``reinforce * (log p(y|s,a) - b) * d log p(s|a)``,
      and the entropy bonus ``entropy * H[s]`` (§4.1). The cross-entropy term gives
      ``d log p(y|s,a)``. A learned baseline adds its squared error ``(b - r)^2``.

    ``targets (B, T)`` are the words to predict (``pad_id`` where none). Returns the loss and
    ``{"nll", "penalty", "reward", "entropy"}`` (those that apply) as floats; ``reward`` is the
    batch mean of ``log p(y | s, a)`` over the captions whose locations were sampled, the value
    the caller's baseline tracks (absent when none was).
    """
    mask = targets != pad_id  # (B, T)
    n_tokens = mask.sum().clamp_min(1)
    nll = torch.nn.functional.cross_entropy(
        out.logits.transpose(1, 2), targets, reduction="none"
    )  # (B, T)
    nll = nll * mask
    loss = nll.sum() / n_tokens
    stats = {"nll": loss.item()}
    if out.log_prob is not None:
        from attnkit.attention.normalisers import reinforce_loss

        reward = -nll.sum(dim=1)  # (B,): log p(y | s, a)
        log_p_s = (out.log_prob * mask).sum(dim=1)  # (B,): log p(s | a); 0 where not sampled
        scale = targets.size(0) / n_tokens  # reinforce_loss averages per caption
        b = baseline_values(reward, kind, baseline, samples, out.value)  # (B,)
        loss = loss + reinforce * scale * reinforce_loss(log_p_s, reward, b)
        if kind == "learned":
            fit = ((out.value - reward.detach()) ** 2).mean()
            loss = loss + fit
            stats["baseline_error"] = fit.item()
        mean_entropy = (out.entropy * mask).sum() / n_tokens
        loss = loss - entropy * mean_entropy
        # the baseline tracks the reward of sampled captions only (hard_expectation)
        sampled = reward if out.sampled is None else reward[out.sampled]
        stats["entropy"] = mean_entropy.item()
        if sampled.numel():
            stats["reward"] = sampled.mean().item()
    elif penalty:
        term = doubly_stochastic_penalty(out.alpha, mask).sum() / n_tokens
        loss = loss + penalty * term
        stats["penalty"] = term.item()
    return loss, stats


def baseline_values(
    reward: Tensor, kind: str, moving: float, samples: int, value: Tensor | None = None
) -> Tensor:
    """The baseline ``b (B,)`` subtracted from each caption's ``reward (B,)`` (module docstring);
    ``moving`` is the moving average, ``samples`` the consecutive captions of one image."""
    if kind == "moving":
        return torch.full_like(reward, moving)
    if kind == "none":
        return torch.zeros_like(reward)
    if kind == "loo":
        if samples < 2 or reward.numel() % samples:
            raise ValueError(
                f"a leave-one-out baseline needs groups of >= 2 samples, got {samples}"
            )
        group = reward.detach().view(-1, samples)  # (images, k)
        return ((group.sum(1, keepdim=True) - group) / (samples - 1)).reshape(-1)
    if kind == "learned":
        if value is None:
            raise ValueError("a learned baseline needs the model's value head (train.baseline)")
        return value.detach()
    raise ValueError(f"unknown baseline {kind!r}; choose moving, loo, learned or none")
