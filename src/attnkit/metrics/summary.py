"""Summary scores: ROUGE against several references, and how much a summary repeats itself and
copies its source (See, Liu & Manning 2017, Fig. 4 on repetition, §7.2 and Fig. 6 on novelty).

**ROUGE** (:func:`rouge`): ROUGE-1, ROUGE-2 and ROUGE-L F1 by Google's ``rouge_score``
(``RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)``: lowercased, letters and
digits only, Porter-stemmed), in **points** (0-100). With several references, SciTLDR's rule
(``rule="best"``, the default): allenai/scitldr ``scripts/cal-rouge.py`` (``_get_rouge``, commit
5ccad9c) scores the prediction against each reference, keeps **the one reference with the
highest ROUGE-1 F1** (the first on a tie: it replaces only on a strictly higher ROUGE-1) and
reports that reference's ROUGE-1, -2 and -L together ("multi-max"): not a separate maximum per
metric, so its ROUGE-2 or -L may be below another reference's. The same script also reports
``"first"`` (the first target, the author's TLDR) and ``"mean"`` (each metric averaged over the
references); both are offered. The paper scored with ROUGE-1.5.5 (Perl) through ``files2rouge``;
``rouge_score`` is a reimplementation with its own tokenizer, so figures need not match the
paper's exactly. :func:`corpus_rouge` is the mean over papers, as the script's
``DataFrame.mean()``.

**Repetition and copying** (token lists, as tokenized by the caller):

- :func:`repeated_ngram_share` / :func:`repeated_trigram_share`: the share of a summary's
  n-grams (each occurrence) that repeat an n-gram seen earlier in the same summary;
  See et al. (Fig. 4) count duplicated n-grams so to show that coverage removes repetition.
  "a b c a b c" has four trigrams, the last repeats the first: 1/4.
- :func:`copied_share`: the share of summary tokens (each occurrence) found anywhere in the
  source; 0 for an empty summary.
- :func:`novel_ngram_share`: the share of the summary's n-grams (each occurrence) that occur
  nowhere in the source (See et al. Fig. 6, "% that are novel"); 0 for a summary shorter than
  ``n``. For ``n = 1`` it is ``1 - copied_share``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

KEYS = ("rouge1", "rouge2", "rougeL")
RULES = ("best", "first", "mean")


@lru_cache(maxsize=1)
def _scorer():
    from rouge_score.rouge_scorer import RougeScorer  # imported on first use: a slow import

    return RougeScorer(list(KEYS), use_stemmer=True)


def _f1(prediction: str, reference: str) -> dict[str, float]:
    """ROUGE-1/2/L F1 in points of ``prediction`` against one ``reference``."""
    scores = _scorer().score(reference, prediction)  # rouge_score's order: target, prediction
    return {key: 100.0 * scores[key].fmeasure for key in KEYS}


def rouge(prediction: str, references: Sequence[str] | str, rule: str = "best") -> dict[str, float]:
    """ROUGE-1/2/L F1 in points of ``prediction`` against ``references`` (one string or a
    list), combined by ``rule`` (module docstring): "best" (SciTLDR's: the reference with
    the highest ROUGE-1 F1, the first on a tie), "first" or "mean"."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, not {rule!r}")
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise ValueError("no reference to score against: give at least one")
    if rule == "first":
        return _f1(prediction, refs[0])
    each = [_f1(prediction, ref) for ref in refs]
    if rule == "mean":
        return {key: float(np.mean([s[key] for s in each])) for key in KEYS}
    best = each[0]
    for scores in each[1:]:
        if scores["rouge1"] > best["rouge1"]:  # strictly higher: a tie keeps the earlier one
            best = scores
    return best


def corpus_rouge(
    predictions: Sequence[str], references_list: Sequence[Sequence[str]], rule: str = "best"
) -> dict[str, float]:
    """The mean over papers of :func:`rouge` (points); one reference list per prediction."""
    if len(predictions) != len(references_list):
        raise ValueError(
            f"{len(predictions)} predictions and {len(references_list)} reference lists: "
            "give one reference list per prediction"
        )
    if not predictions:
        raise ValueError("no predictions to score")
    each = [rouge(p, refs, rule) for p, refs in zip(predictions, references_list, strict=True)]
    return {key: float(np.mean([s[key] for s in each])) for key in KEYS}


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def repeated_ngram_share(tokens: Sequence[str], n: int = 3) -> float:
    """The share of the n-grams of ``tokens`` that repeat an earlier n-gram of the same
    sequence (module docstring); 0 when there are fewer than ``n`` tokens."""
    grams = _ngrams(tokens, n)
    if not grams:
        return 0.0
    seen: set[tuple[str, ...]] = set()
    repeats = 0
    for gram in grams:
        repeats += gram in seen
        seen.add(gram)
    return repeats / len(grams)


def repeated_trigram_share(tokens: Sequence[str]) -> float:
    """:func:`repeated_ngram_share` with ``n = 3`` (See et al. 2017, Fig. 4)."""
    return repeated_ngram_share(tokens, 3)


def copied_share(summary_tokens: Sequence[str], source_tokens: Sequence[str]) -> float:
    """The share of summary tokens (each occurrence) that occur in the source; 0 if empty."""
    if not summary_tokens:
        return 0.0
    source = set(source_tokens)
    return sum(token in source for token in summary_tokens) / len(summary_tokens)


def novel_ngram_share(
    summary_tokens: Sequence[str], source_tokens: Sequence[str], n: int = 2
) -> float:
    """The share of the summary's n-grams (each occurrence) absent from the source (See et
    al. 2017, Fig. 6); 0 when the summary has fewer than ``n`` tokens."""
    grams = _ngrams(summary_tokens, n)
    if not grams:
        return 0.0
    source = set(_ngrams(source_tokens, n))
    return sum(gram not in source for gram in grams) / len(grams)
