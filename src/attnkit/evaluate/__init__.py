"""Scoring translations: sacreBLEU BLEU and chrF, and BLEU by source length."""

from .metrics import Scores, bleu_by_length, score_corpus

__all__ = ["Scores", "bleu_by_length", "score_corpus"]
