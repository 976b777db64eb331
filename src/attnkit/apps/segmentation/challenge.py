"""A segmentation's test scores: the pixel scores, and for ISBI also the 2012 challenge's.

Pixel-exact membrane F1 sits at the labels' own one-pixel uncertainty (the ISBI test slices'
labels against themselves dilated by one pixel score 0.876;
:func:`~attnkit.metrics.boundaries.label_ceiling`). For the ``isbi`` source, whose foreground
is the membrane, :func:`split_scores` therefore adds the membrane F1 with a border tolerance of
1 and 2 pixels (``f1_tol1``, ``f1_tol2``, pooled) and the challenge's ranking scores ``v_rand``
and ``v_info`` after thinning the predicted membranes (Arganda-Carreras et al. 2015,
"Crowdsourcing the creation of image segmentation algorithms for connectomics", Front.
Neuroanat. 9:142; the mean over the test slices, as the challenge's script averages them), all
at the caller's threshold. These read the foreground as boundaries between regions; the other
sources' masks are objects, not boundaries, so they get the pixel scores alone.
"""

from __future__ import annotations

from dataclasses import asdict

from attnkit.metrics.boundaries import tolerant_f1, v_info, v_rand
from attnkit.metrics.segmentation import scores

__all__ = ["challenge_scores", "split_scores"]


def challenge_scores(pred, truth) -> dict[str, float]:
    """``f1_tol1``, ``f1_tol2``, ``v_rand`` and ``v_info`` of binary membrane maps ``pred`` and
    ``truth`` (``(N, 1, H, W)`` or ``(N, H, W)``, NumPy or torch)."""
    return {
        "f1_tol1": tolerant_f1(pred, truth, 1).f1,
        "f1_tol2": tolerant_f1(pred, truth, 2).f1,
        "v_rand": v_rand(pred, truth).score,
        "v_info": v_info(pred, truth).score,
    }


def split_scores(probs, masks, source: str, threshold: float = 0.5) -> dict[str, float]:
    """The scores of probabilities ``probs`` against ``masks`` (``(N, 1, H, W)``) at
    ``threshold``: :func:`~attnkit.metrics.segmentation.scores` as a dict, and for the ``isbi``
    source also :func:`challenge_scores`."""
    pred, truth = probs > threshold, masks > threshold
    found = asdict(scores(pred, truth))
    if source == "isbi":
        found |= challenge_scores(pred, truth)
    return found
