"""Corpus BLEU (Papineni et al. 2002) and chrF (Popović 2015) through sacreBLEU (Post 2018).

sacreBLEU's defaults: BLEU with the 13a tokeniser, cased, on detokenised text; chrF with
character 6-grams and beta 2. The signature that makes a score reproducible is returned with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sacrebleu.metrics import BLEU, CHRF


@dataclass
class Scores:
    """BLEU and chrF of a corpus, with sacreBLEU's signatures."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    n_sentences: int


def _check(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} references: they must pair up"
        )


def score_corpus(hypotheses: Sequence[str], references: Sequence[str]) -> Scores:
    """sacreBLEU corpus BLEU and chrF of detokenised ``hypotheses`` against one reference each."""
    _check(hypotheses, references)
    bleu, chrf = BLEU(), CHRF()
    b = bleu.corpus_score(list(hypotheses), [list(references)])
    c = chrf.corpus_score(list(hypotheses), [list(references)])
    return Scores(
        b.score, c.score, str(bleu.get_signature()), str(chrf.get_signature()), len(hypotheses)
    )


def bleu_by_length(
    sources: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[str],
    edges: Sequence[int] = (10, 20, 30, 40, 50),
) -> list[dict]:
    """Corpus BLEU per bucket of source length in whitespace tokens (Bahdanau et al. 2015, Fig. 2).

    Buckets are ``[1, e0]``, ``(e0, e1]``, ..., ``(e_last, inf)``; empty buckets are left out.
    Returns rows ``{"bucket": "11-20", "n": count, "bleu": score}``.
    """
    _check(hypotheses, references)
    _check(sources, references)
    bounds = [0, *edges, None]
    rows = []
    for low, high in zip(bounds[:-1], bounds[1:], strict=True):
        index = [
            i
            for i, s in enumerate(sources)
            if len(s.split()) > low and (high is None or len(s.split()) <= high)
        ]
        if not index:
            continue
        label = f"{low + 1}-{high}" if high is not None else f">{low}"
        hyp = [hypotheses[i] for i in index]
        ref = [references[i] for i in index]
        rows.append(
            {"bucket": label, "n": len(index), "bleu": BLEU().corpus_score(hyp, [ref]).score}
        )
    return rows
