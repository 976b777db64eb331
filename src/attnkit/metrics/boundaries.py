"""Scores of membrane (boundary) maps: tolerant F1, the ISBI 2012 challenge's V-Rand and V-Info,
and the ceiling the labels themselves set on pixel F1.

A pixel-exact membrane F1 (:func:`attnkit.metrics.segmentation.foreground_f1`) is limited by the
labels' own one-pixel uncertainty (:func:`label_ceiling`). The ISBI 2012 challenge
(Arganda-Carreras et al. 2015, "Crowdsourcing the creation of image segmentation algorithms for
connectomics", Front. Neuroanat. 9:142, where V-Rand and V-Info are defined) therefore ranks by
scores of the *regions* the membranes enclose, after thinning the predicted membranes to
one-pixel lines:

- **V-Rand** (foreground-restricted Rand scoring): with ``n_ij`` the number of
  pixels in predicted region ``i`` and true region ``j`` (true membrane pixels left out),
  ``s_i = sum_j n_ij``, ``t_j = sum_i n_ij``, counting ordered pairs of distinct pixels
  (``n (n - 1)``) as ``skimage.metrics.adapted_rand_error`` does::

      split = sum_ij n_ij (n_ij - 1) / sum_j t_j (t_j - 1)   (same true region -> same predicted)
      merge = sum_ij n_ij (n_ij - 1) / sum_i s_i (s_i - 1)   (same predicted -> same true)
      V-Rand = 2 split merge / (split + merge)
             = sum_ij n_ij (n_ij - 1) / (sum_i s_i (s_i - 1) / 2 + sum_j t_j (t_j - 1) / 2)

- **V-Info** (foreground-restricted information-theoretic scoring): with ``I`` the
  mutual information of the predicted (S) and true (T) regions over the same pixels,
  ``I = H(T) - H(T | S)``::

      split = I / H(S)      merge = I / H(T)      V-Info = 2 I / (H(S) + H(T))

Splitting a true region lowers only the split terms, merging two only the merge terms. A term
``0 / 0`` (no pairs, no entropy to keep) is 1. Both scores are computed per image and averaged
over the images, as the challenge's script does (``perSliceAverage``).

**The procedure** follows the challenge's own code, Fiji's Trainable Segmentation
``RandError.getForegroundRestrictedRandAfterThinningStatsN2`` and
``VariationOfInformation.foregroundRestrictedScoreAfterThinningN2`` (fiji/Trainable_Segmentation,
``trainableSegmentation/metrics``): the true regions are the **4-connected** components of the
non-membrane pixels; the predicted membranes are thinned by a **4-connected** watershed
(Vincent and Soille 1991) flooding the membranes from the 4-connected regions between them,
whose one-pixel watershed lines are the thinned boundaries; every boundary pixel of the
prediction lying in a true region counts as a region of its own (the script's ``p_i0`` terms).
``thinning="skeleton"`` thins with ``skimage.morphology.skeletonize`` (Zhang and Suen 1984)
instead and labels the rest 4-connected: a skeleton is an 8-connected curve, which separates
4-connected regions only (Rosenfeld 1970), and it keeps dead-end spurs the watershed absorbs.
The map is padded (edge mode, by its thickest membrane's half-width + 1) before skeletonising:
unpadded, a skeleton's ends retreat from the image edge and the regions beside a membrane that
meets the edge merge (the ISBI test slices' own labels scored V-Rand 0.69 against themselves).

Inputs are binary membrane maps (bool or 0/1, NumPy or torch): the last two axes are an image,
any leading axes count images (``(H, W)``, ``(N, H, W)`` or ``(N, 1, H, W)``). The threshold
that made a probability map binary is the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import ndimage as ndi
from skimage.measure import label
from skimage.metrics import adapted_rand_error, contingency_table, variation_of_information
from skimage.morphology import skeletonize
from skimage.segmentation import watershed

from attnkit.metrics.segmentation import _binary, _ratio, foreground_f1

__all__ = [
    "BoundaryF1",
    "LabelCeiling",
    "SplitMerge",
    "label_ceiling",
    "predicted_regions",
    "tolerant_f1",
    "true_regions",
    "v_info",
    "v_rand",
]

Thinning = Literal["watershed", "skeleton"]
_CROSS = ndi.generate_binary_structure(2, 1)  # the 4-neighbourhood: pixels within distance 1


@dataclass(frozen=True)
class BoundaryF1:
    """Membrane F1 with a border tolerance: pooled over every image (counts summed) and the
    mean of each image's score; ``images``: how many."""

    tolerance: float
    precision: float
    recall: float
    f1: float
    mean_precision: float
    mean_recall: float
    mean_f1: float
    images: int


@dataclass(frozen=True)
class SplitMerge:
    """A split/merge F-score (V-Rand or V-Info) and its two terms, each the mean over images."""

    score: float
    split: float
    merge: float
    images: int


@dataclass(frozen=True)
class LabelCeiling:
    """Pixel F1 of the true membranes against themselves dilated and eroded by one pixel:
    pooled over the images and the mean of each image's."""

    dilated: float
    eroded: float
    mean_dilated: float
    mean_eroded: float


def _images(x, name: str) -> np.ndarray:
    """``x`` as a bool stack ``(N, H, W)``: the last two axes an image, the leading ones images."""
    b = _binary(x, name)
    if b.ndim < 2:
        raise ValueError(f"{name} must have an image's two axes (H, W), got shape {b.shape}")
    return b.reshape(-1, *b.shape[-2:])


def _pair(pred, truth) -> tuple[np.ndarray, np.ndarray]:
    p, t = _images(pred, "pred"), _images(truth, "truth")
    if p.shape != t.shape:
        raise ValueError(f"pred and truth differ in shape: {p.shape} and {t.shape}")
    if not len(p):
        raise ValueError("no images to score: pred and truth hold 0 images")
    return p, t


def _near(a: np.ndarray, b: np.ndarray, tolerance: float) -> int:
    """How many pixels of ``a (H, W)`` lie within Euclidean ``tolerance`` of a pixel of ``b``."""
    if not b.any():
        return 0
    return int((ndi.distance_transform_edt(~b)[a] <= tolerance).sum())


def _f1(c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 from counts ``(..., 4)``: near pred, pred, near truth, truth."""
    near_p, p, near_t, t = np.moveaxis(c.astype(np.float64), -1, 0)
    empty = p + t == 0  # nothing to find, nothing found: 1, as segmentation.scores
    precision, recall = _ratio(near_p, p, empty), _ratio(near_t, t, empty)
    return precision, recall, _ratio(2 * precision * recall, precision + recall, empty)


def tolerant_f1(pred, truth, tolerance: float = 1) -> BoundaryF1:
    """Membrane F1 with a border tolerance of ``tolerance`` pixels: precision is the share of
    predicted membrane pixels within Euclidean distance ``tolerance``
    (``scipy.ndimage.distance_transform_edt``) of a true one, recall the share of true membrane
    pixels within ``tolerance`` of a predicted one, F1 = 2 P R / (P + R) (the boundary F-measure
    of Martin et al. 2004, with a distance threshold in place of their matching). ``tolerance``
    0 is :func:`~attnkit.metrics.segmentation.foreground_f1`; 1 admits the 4 neighbours, 2 also
    the diagonal ones. Distances are taken within each image."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0 pixels, got {tolerance}")
    p, t = _pair(pred, truth)
    counts = np.array(  # (N, 4)
        [
            [_near(a, b, tolerance), a.sum(), _near(b, a, tolerance), b.sum()]
            for a, b in zip(p, t, strict=True)
        ]
    )
    precision, recall, f1 = _f1(counts.sum(0))
    each = _f1(counts)
    return BoundaryF1(
        float(tolerance),
        float(precision),
        float(recall),
        float(f1),
        *(float(x.mean()) for x in each),
        images=len(counts),
    )


def true_regions(membrane: np.ndarray) -> np.ndarray:
    """The 4-connected regions of a true membrane map ``(H, W)``, labelled 1, 2, ...; 0 on the
    membranes (left out of the scores)."""
    return label(~np.asarray(membrane, dtype=bool), connectivity=1)


def predicted_regions(membrane: np.ndarray, thinning: Thinning = "watershed") -> np.ndarray:
    """The regions of a predicted membrane map ``(H, W)`` after thinning its membranes to
    one-pixel boundaries (labelled 0), by the challenge's 4-connected watershed or by
    skeletonising (module docstring)."""
    m = np.asarray(membrane, dtype=bool)
    if thinning == "skeleton":  # padded: a skeleton's ends retreat from the image edge
        pad = int(np.ceil(ndi.distance_transform_edt(m).max())) + 1 if m.any() else 0
        skeleton = skeletonize(np.pad(m, pad, mode="edge"))[pad : pad + m.shape[0]]
        return label(~skeleton[:, pad : pad + m.shape[1]], connectivity=1)
    if thinning != "watershed":
        raise ValueError(f"thinning must be 'watershed' or 'skeleton', got {thinning!r}")
    basins = label(~m, connectivity=1)
    if not basins.any():  # all membrane: one region, as the script floods one minimum
        return np.ones(m.shape, dtype=basins.dtype)
    return watershed(m.astype(np.uint8), basins, connectivity=1, watershed_line=True)


def _singletons(regions: np.ndarray) -> np.ndarray:
    """``regions`` with each boundary pixel (0) a region of its own (the script's ``p_i0``)."""
    out = regions.astype(np.int64)
    zero = out == 0
    out[zero] = out.max() + 1 + np.arange(zero.sum())
    return out


def _labelled(pred, truth, thinning: Thinning):
    for p, t in zip(*_pair(pred, truth), strict=True):
        yield true_regions(t), _singletons(predicted_regions(p, thinning))


def _mean(terms: list[tuple[float, float, float]]) -> SplitMerge:
    score, split, merge = np.nan_to_num(np.array(terms, dtype=np.float64), nan=1.0).mean(0)
    return SplitMerge(float(score), float(split), float(merge), len(terms))


def v_rand(pred_membrane, truth_membrane, *, thinning: Thinning = "watershed") -> SplitMerge:
    """V-Rand of the ISBI 2012 challenge (module docstring; Arganda-Carreras et al. 2015),
    ``1 - skimage.metrics.adapted_rand_error`` of the thinned predicted regions
    against the true regions, true membrane pixels ignored, averaged over the images.
    scikit-image 0.26 returns the terms as ``(error, precision, recall)`` with ``precision``
    normalised by the *true* pairs (its issue #6485): that is the split term here."""
    terms = []
    with np.errstate(invalid="ignore", divide="ignore"):  # a 0 / 0 term is 1 (_mean)
        for t, p in _labelled(pred_membrane, truth_membrane, thinning):
            if not t.any():
                raise ValueError("a true membrane map has no region pixels to score")
            error, by_true, by_pred = adapted_rand_error(t, p, ignore_labels=(0,))
            terms.append((1.0 - error, by_true, by_pred))
    return _mean(terms)


def _entropy(p: np.ndarray) -> float:
    """Shannon entropy in bits of the probabilities ``p`` (zeros skipped)."""
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def v_info(pred_membrane, truth_membrane, *, thinning: Thinning = "watershed") -> SplitMerge:
    """V-Info of the ISBI 2012 challenge (module docstring; Arganda-Carreras et al. 2015):
    ``2 I / (H(S) + H(T))`` with ``I = H(T) - H(T | S)``, the conditional entropy
    from ``skimage.metrics.variation_of_information`` (bits; true membrane pixels ignored), the
    entropies from the same contingency table; split ``I / H(S)``, merge ``I / H(T)``; averaged
    over the images."""
    terms = []
    for t, p in _labelled(pred_membrane, truth_membrane, thinning):
        if not t.any():
            raise ValueError("a true membrane map has no region pixels to score")
        table = contingency_table(t, p, ignore_labels=(0,), normalize=True)  # rows: true
        h_true = _entropy(np.asarray(table.sum(axis=1)).ravel())
        h_pred = _entropy(np.asarray(table.sum(axis=0)).ravel())
        _, true_given_pred = variation_of_information(t, p, table=table)
        info = max(h_true - float(true_given_pred), 0.0)  # I(S; T), >= 0 up to rounding
        split = info / h_pred if h_pred > 0 else 1.0
        merge = info / h_true if h_true > 0 else 1.0
        score = 2 * split * merge / (split + merge) if split + merge > 0 else 0.0
        terms.append((score, split, merge))
    return _mean(terms)


def label_ceiling(truth) -> LabelCeiling:
    """How far pixel F1 can reach against labels uncertain by one pixel: the true membranes
    ``(N, H, W)`` scored (:func:`~attnkit.metrics.segmentation.foreground_f1`) against
    themselves dilated by one pixel (the 4 neighbours added) and eroded by one (the membrane
    pixels next to a region removed: the regions dilated, so the image edge erodes nothing)."""
    t = _images(truth, "truth")
    grow = np.stack([ndi.binary_dilation(x, _CROSS) for x in t])
    shrink = np.stack([x & ~ndi.binary_dilation(~x, _CROSS) for x in t])
    return LabelCeiling(
        foreground_f1(grow, t),
        foreground_f1(shrink, t),
        float(np.mean([foreground_f1(g, x) for g, x in zip(grow, t, strict=True)])),
        float(np.mean([foreground_f1(s, x) for s, x in zip(shrink, t, strict=True)])),
    )
