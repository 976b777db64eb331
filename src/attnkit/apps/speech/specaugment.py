"""SpecAugment's masks (Park et al. 2019, "SpecAugment: A Simple Data Augmentation Method for
Automatic Speech Recognition", Interspeech, §2), on features ``(frames, bands)``.

- Frequency masking: ``m_F`` times, a width ``f`` drawn uniformly from ``[0, F]`` and a first
  band ``f0`` from ``[0, v - f)``; bands ``[f0, f0 + f)`` are masked (``v`` bands in all).
- Time masking: ``m_T`` times, a width ``t`` from ``[0, T]``, capped at ``p`` times the number
  of frames ``tau`` (the paper's upper bound), and a first frame ``t0`` from ``[0, tau - t)``.
- Masked entries take the mean of the features: the paper masks to zero after normalising the
  log-mel spectrogram to zero mean, "equivalent to setting it to the mean value".

Time warping, the paper's third augmentation and the one its discussion (§5) finds least
useful ("not a major factor"), is left out. The defaults are the paper's Switchboard-mild
policy (SM: ``F = 15, m_F = 2, T = 70, p = 0.2, m_T = 2``, Table 1) with ``F`` scaled from 80 to
40 bands (8). Draws come from a seeded :class:`numpy.random.Generator`, so a seed gives the
same masks every time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SpecAugment:
    """One masking policy (Park et al. 2019, Table 1 names ``F, m_F, T, p, m_T``)."""

    freq_masks: int = 2  # m_F: frequency masks per utterance
    freq_width: int = 8  # F: widest frequency mask, in bands
    time_masks: int = 2  # m_T: time masks per utterance
    time_width: int = 70  # T: widest time mask, in frames
    time_ratio: float = 0.2  # p: a time mask covers at most p * frames

    def __post_init__(self) -> None:
        for name in ("freq_masks", "freq_width", "time_masks", "time_width"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"SpecAugment {name} must be a whole number >= 0, got {value!r}")
        if not 0.0 <= self.time_ratio <= 1.0:
            raise ValueError(f"SpecAugment time_ratio must lie in [0, 1], got {self.time_ratio}")


def _spans(rng: np.random.Generator, count: int, widest: int, length: int) -> list[range]:
    """``count`` spans of width ``U[0, widest]`` (at most ``length``) starting in
    ``U[0, length - width)`` (Park et al. 2019, §2)."""
    spans = []
    for _ in range(count):
        width = int(rng.integers(0, min(widest, length) + 1))
        start = int(rng.integers(0, length - width + 1))
        spans.append(range(start, start + width))
    return spans


def mask(frames: int, bands: int, policy: SpecAugment, rng: np.random.Generator) -> np.ndarray:
    """The masked entries of a ``(frames, bands)`` feature matrix: bool, True = masked.

    Frequency masks first, then time masks, each from ``rng`` in that order."""
    masked = np.zeros((frames, bands), dtype=bool)  # (frames, bands)
    for span in _spans(rng, policy.freq_masks, policy.freq_width, bands):
        masked[:, span.start : span.stop] = True
    widest = min(policy.time_width, int(policy.time_ratio * frames))  # T, and p * tau
    for span in _spans(rng, policy.time_masks, widest, frames):
        masked[span.start : span.stop, :] = True
    return masked


def spec_augment(
    features: np.ndarray,
    policy: SpecAugment,
    seed: int | np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Features with SpecAugment's frequency and time masks (Park et al. 2019, §2).

    Args:
        features: ``(frames, bands)`` log-mel (or other) features.
        policy: the widths and counts of the masks.
        seed: an int or a generator; the same seed gives the same masks.
    Returns:
        ``(masked, where)``: a new float32 ``(frames, bands)`` array whose masked entries hold
        the mean of ``features``, and the bool ``(frames, bands)`` mask (True = masked).
    """
    features = np.asarray(features, dtype=np.float32)
    if features.ndim != 2 or features.size == 0:
        raise ValueError(f"spec_augment takes non-empty (frames, bands), got {features.shape}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    where = mask(features.shape[0], features.shape[1], policy, rng)  # (frames, bands)
    masked = np.where(where, features.mean(), features).astype(np.float32)  # (frames, bands)
    return masked, where
