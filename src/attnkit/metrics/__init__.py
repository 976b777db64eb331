"""Scoring translations: sacreBLEU BLEU and chrF, and BLEU by source length."""

from attnkit.metrics.bleu import Scores, bleu_by_length, score_corpus

__all__ = ["Scores", "bleu_by_length", "score_corpus"]
