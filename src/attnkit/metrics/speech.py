"""Speech recognition scores: WER and CER (``jiwer``), digit error rate, and how monotonic an
attention alignment is.

- :func:`wer`, :func:`cer`: corpus-level, as ``jiwer`` computes them: the edit operations
  (substitutions S, deletions D, insertions I, by Levenshtein alignment) summed over all
  utterances, over the reference length N summed likewise, ``(S + D + I) / N``; not a mean of
  per-utterance rates. CER counts every character, spaces included. :func:`word_errors` gives
  the counts behind the WER.
- :func:`digit_error_rate`: the WER over digit tokens, every digit its own token, so ``"773"``
  and ``"7 7 3"`` are the same three tokens.
- :func:`monotonicity`: the share of decoder steps whose attention peak (the argmax frame) does
  not move backwards from the previous step's, ``#{i >= 2 : argmax_j a_{i,j} >= argmax_j
  a_{i-1,j}} / (T_out - 1)``. Speech is read left to right, so a good alignment keeps it near
  1; jumping back to an earlier, similar frame is the failure of content-only attention on
  long and repetitive utterances that location-awareness addresses (Chorowski et al. 2015).
  :func:`corpus_monotonicity` averages it over utterances.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import jiwer
import numpy as np


@dataclass(frozen=True)
class ErrorCounts:
    """The edit operations of a corpus against its references and the rate they give."""

    rate: float  # (substitutions + deletions + insertions) / reference_tokens
    substitutions: int
    deletions: int
    insertions: int
    hits: int
    reference_tokens: int  # hits + substitutions + deletions


def _pair(references: Sequence[str] | str, hypotheses: Sequence[str] | str):
    """Both as lists of strings of the same length, or a ValueError saying which differs."""
    references = [references] if isinstance(references, str) else list(references)
    hypotheses = [hypotheses] if isinstance(hypotheses, str) else list(hypotheses)
    if len(references) != len(hypotheses):
        raise ValueError(
            f"{len(references)} references but {len(hypotheses)} hypotheses: one each per utterance"
        )
    if not references:
        raise ValueError("no utterances to score")
    return references, hypotheses


def word_errors(references: Sequence[str] | str, hypotheses: Sequence[str] | str) -> ErrorCounts:
    """Corpus word error counts (``jiwer.process_words``): tokens are split on whitespace."""
    out = jiwer.process_words(*_pair(references, hypotheses))
    counts = (out.substitutions, out.deletions, out.insertions, out.hits)
    return ErrorCounts(out.wer, *counts, out.hits + out.substitutions + out.deletions)


def wer(references: Sequence[str] | str, hypotheses: Sequence[str] | str) -> float:
    """Corpus word error rate ``(S + D + I) / N`` (``jiwer.wer``); above 1 with many insertions."""
    return float(jiwer.wer(*_pair(references, hypotheses)))


def cer(references: Sequence[str] | str, hypotheses: Sequence[str] | str) -> float:
    """Corpus character error rate (``jiwer.cer``): the WER's formula over characters."""
    return float(jiwer.cer(*_pair(references, hypotheses)))


def digit_tokens(text: str) -> str:
    """Every digit as its own token, other tokens kept: ``"77 3x"`` -> ``"7 7 3 x"``."""
    return " ".join(re.sub(r"(\d)", r" \1 ", text).split())


def digit_error_rate(references: Sequence[str] | str, hypotheses: Sequence[str] | str) -> float:
    """WER over digit tokens (:func:`digit_tokens`); a non-digit token in a hypothesis stays a
    token, so it counts as an error against the digits."""
    references, hypotheses = _pair(references, hypotheses)
    return wer([digit_tokens(r) for r in references], [digit_tokens(h) for h in hypotheses])


def _matrix(weights) -> np.ndarray:
    """An attention matrix ``(T_out, T_in)`` as a NumPy array (torch tensors detached)."""
    if hasattr(weights, "detach"):
        weights = weights.detach().cpu().float().numpy()
    matrix = np.asarray(weights, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(
            f"attention weights must be one utterance's (T_out, T_in) matrix, got shape "
            f"{matrix.shape}; cut the padding and the batch axis first"
        )
    return matrix


def monotonicity(weights) -> float:
    """Share of steps ``i = 2..T_out`` whose peak frame ``argmax_j a_{i,j}`` is at or after
    step ``i - 1``'s (staying on a frame counts as not moving back).

    ``weights (T_out, T_in)``: one utterance, padding cut (NumPy or torch). NaN when there is
    no step to compare (``T_out < 2``). Ties go to the first frame, as ``argmax``.
    """
    peaks = _matrix(weights).argmax(axis=1)  # (T_out,)
    if peaks.size < 2:
        return math.nan
    return float(np.mean(peaks[1:] >= peaks[:-1]))


def corpus_monotonicity(matrices: Iterable) -> float:
    """The mean of :func:`monotonicity` over utterances, each counting once; those with fewer
    than two output steps have no step to judge and are left out (NaN if none is left)."""
    values = [monotonicity(m) for m in matrices]
    judged = [v for v in values if not math.isnan(v)]
    return float(np.mean(judged)) if judged else math.nan
