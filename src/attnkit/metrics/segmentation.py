"""Scores of binary segmentation masks: Dice, IoU, pixel error, foreground precision/recall/F1.

With ``TP``, ``FP``, ``FN``, ``TN`` the counts of foreground (1) and background (0) pixels::

    Dice = 2 TP / (2 TP + FP + FN)           (Dice 1945; Sorensen 1948)
    IoU  = TP / (TP + FP + FN)               (Jaccard index)
    pixel error = (FP + FN) / (TP + FP + FN + TN)   (the fraction of pixels wrong)
    precision = TP / (TP + FP)   recall = TP / (TP + FN)   F1 = 2 P R / (P + R)

For binary masks the foreground F1 *is* the Dice coefficient (``2PR / (P + R)`` simplifies to
``2 TP / (2 TP + FP + FN)``); both names are given because the ISBI 2012 EM literature speaks
of the membrane F1 and medical imaging of Dice.

Conventions: a prediction and a truth that are **both empty** score Dice = IoU = precision =
recall = F1 = 1 (nothing to find, nothing found); any other ratio ``0 / 0`` is 0 (an empty
prediction of a non-empty truth has precision 0, so F1 stays equal to Dice). The pixel error
here is the plain misclassification rate, not the ISBI challenge's thresholded variant.

Inputs: ``pred`` and ``truth`` of the same shape, bool or holding only 0 and 1, as NumPy arrays
or torch tensors (moved to the CPU). The functions :func:`dice`, :func:`iou`,
:func:`pixel_error` and :func:`foreground_f1` pool every pixel they are given; :func:`scores`
also averages per image, reading the first axis as images (``(N, ...)``; a 2-D array is one
image).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Scores", "dice", "foreground_f1", "iou", "pixel_error", "scores"]


@dataclass(frozen=True)
class Scores:
    """Every score of a set of masks, pooled over all its pixels and averaged per image.

    ``dice``, ``iou``, ``pixel_error``, ``precision``, ``recall``, ``f1``: pooled (the set's
    pixels counted together; ``f1 == dice``). ``mean_dice``, ``mean_iou``,
    ``mean_pixel_error``, ``mean_precision``, ``mean_recall``: the mean of each image's score.
    ``images``: how many images; ``foreground``: the fraction of truth pixels that are 1.
    """

    dice: float
    iou: float
    pixel_error: float
    precision: float
    recall: float
    f1: float
    mean_dice: float
    mean_iou: float
    mean_pixel_error: float
    mean_precision: float
    mean_recall: float
    images: int
    foreground: float

    def as_dict(self) -> dict[str, float]:
        """The scores as a plain ``dict`` (for a metrics file)."""
        return asdict(self)


def _binary(x, name: str) -> np.ndarray:
    """``x`` (NumPy array or torch tensor) as a bool array; values other than 0/1 are refused."""
    if hasattr(x, "detach"):  # a torch tensor, without importing torch
        x = x.detach().cpu().numpy()
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x
    if x.size and not np.isin(x, (0, 1)).all():
        found = np.unique(x)
        shown = ", ".join(f"{v:g}" for v in found[:5]) + (", ..." if len(found) > 5 else "")
        raise ValueError(
            f"{name} must be a binary mask (bool or 0/1), found values {shown}; threshold "
            "probabilities first"
        )
    return x.astype(bool)


def _counts(pred, truth) -> np.ndarray:
    """``(N, 4)`` int64 counts ``TP, FP, FN, TN`` of each image (a 2-D input is one image)."""
    p, t = _binary(pred, "pred"), _binary(truth, "truth")
    if p.shape != t.shape:
        raise ValueError(f"pred and truth differ in shape: {p.shape} and {t.shape}")
    if p.ndim < 3:
        p, t = p.reshape(1, -1), t.reshape(1, -1)
    shape = (len(p), int(np.prod(p.shape[1:])))  # (N, pixels); N may be 0
    p, t = p.reshape(shape), t.reshape(shape)
    tp = (p & t).sum(1)
    fp = (p & ~t).sum(1)
    fn = (~p & t).sum(1)
    tn = (~p & ~t).sum(1)
    return np.stack([tp, fp, fn, tn], axis=1).astype(np.int64)


def _ratio(num: np.ndarray, den: np.ndarray, both_empty: np.ndarray) -> np.ndarray:
    """``num / den``, 1 where prediction and truth are both empty, else 0 where ``den == 0``."""
    out = np.divide(num, den, out=np.zeros(num.shape, dtype=np.float64), where=den > 0)
    return np.where(both_empty, 1.0, out)


def _scores(c: np.ndarray) -> dict[str, np.ndarray]:
    """Every score from counts ``(..., 4)``, element-wise."""
    tp, fp, fn, tn = np.moveaxis(c.astype(np.float64), -1, 0)
    empty = tp + fp + fn == 0
    precision, recall = _ratio(tp, tp + fp, empty), _ratio(tp, tp + fn, empty)
    return {
        "dice": _ratio(2 * tp, 2 * tp + fp + fn, empty),
        "iou": _ratio(tp, tp + fp + fn, empty),
        "pixel_error": _ratio(fp + fn, tp + fp + fn + tn, np.zeros_like(empty)),
        "precision": precision,
        "recall": recall,
        "f1": _ratio(2 * precision * recall, precision + recall, empty),
    }


def _pooled(pred, truth, name: str) -> float:
    return float(_scores(_counts(pred, truth).sum(0))[name])


def dice(pred, truth) -> float:
    """Dice coefficient ``2 TP / (2 TP + FP + FN)`` of the foreground over every pixel given;
    1.0 when both masks are empty."""
    return _pooled(pred, truth, "dice")


def iou(pred, truth) -> float:
    """Intersection over union ``TP / (TP + FP + FN)`` of the foreground (Jaccard index); 1.0
    when both masks are empty."""
    return _pooled(pred, truth, "iou")


def pixel_error(pred, truth) -> float:
    """The fraction of pixels whose predicted class is wrong, ``(FP + FN) / all``."""
    return _pooled(pred, truth, "pixel_error")


def foreground_f1(pred, truth) -> float:
    """F1 of the foreground pixels, ``2 P R / (P + R)`` with precision ``P = TP / (TP + FP)``
    and recall ``R = TP / (TP + FN)``; equal to :func:`dice` for binary masks (1.0 when both
    are empty). :func:`scores` gives P and R too."""
    return _pooled(pred, truth, "f1")


def scores(pred, truth) -> Scores:
    """All the scores of a set of masks ``(N, ...)`` (a 2-D array is one image), pooled over
    every pixel and averaged per image (:class:`Scores`)."""
    counts = _counts(pred, truth)  # (N, 4)
    if not len(counts):
        raise ValueError("no masks to score: pred and truth hold 0 images")
    pooled, each = _scores(counts.sum(0)), _scores(counts)
    total = counts.sum()
    return Scores(
        dice=float(pooled["dice"]),
        iou=float(pooled["iou"]),
        pixel_error=float(pooled["pixel_error"]),
        precision=float(pooled["precision"]),
        recall=float(pooled["recall"]),
        f1=float(pooled["f1"]),
        mean_dice=float(each["dice"].mean()),
        mean_iou=float(each["iou"].mean()),
        mean_pixel_error=float(each["pixel_error"].mean()),
        mean_precision=float(each["precision"].mean()),
        mean_recall=float(each["recall"].mean()),
        images=len(counts),
        foreground=float((counts[:, 0] + counts[:, 2]).sum() / total) if total else 0.0,
    )
