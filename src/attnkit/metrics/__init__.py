"""Scoring: sacreBLEU BLEU and chrF and BLEU by source length (translation); Dice, IoU, pixel
error and foreground F1 of binary masks (segmentation)."""

from attnkit.metrics.bleu import Scores, bleu_by_length, score_corpus
from attnkit.metrics.segmentation import Scores as SegmentationScores
from attnkit.metrics.segmentation import dice, foreground_f1, iou, pixel_error
from attnkit.metrics.segmentation import scores as segmentation_scores

__all__ = [
    "Scores",
    "SegmentationScores",
    "bleu_by_length",
    "dice",
    "foreground_f1",
    "iou",
    "pixel_error",
    "score_corpus",
    "segmentation_scores",
]
