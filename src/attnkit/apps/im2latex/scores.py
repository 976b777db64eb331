"""The paper's measures (Deng et al. 2017, §5): BLEU-4 on token sequences, exact token match,
and image match (render both, compare pixels; :mod:`~attnkit.apps.im2latex.image_match`).

BLEU is sacreBLEU's corpus BLEU with ``tokenize="none"`` on the space-joined tokens, so the
paper's tokenisation is the one scored (Post 2018 on reproducible BLEU).
"""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics import BLEU


def token_bleu(predictions: Sequence[Sequence[str]], truths: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU-4 (0-100) of token sequences, no further tokenisation."""
    if len(predictions) != len(truths):
        raise ValueError(f"{len(predictions)} predictions but {len(truths)} truths")
    bleu = BLEU(tokenize="none")
    return bleu.corpus_score(
        [" ".join(p) for p in predictions], [[" ".join(t) for t in truths]]
    ).score


def exact_match(predictions: Sequence[Sequence[str]], truths: Sequence[Sequence[str]]) -> float:
    """Share of predictions whose token sequence equals the truth's."""
    if not truths:
        return 0.0
    return sum(list(p) == list(t) for p, t in zip(predictions, truths, strict=True)) / len(truths)


def formula_scores(
    predictions: Sequence[Sequence[str]], truths: Sequence[Sequence[str]], *, images: bool = True
) -> dict[str, float]:
    """BLEU, exact match and (``images``) image match with and without whitespace columns,
    with the counts of formulas that could not be rendered."""
    row: dict[str, float] = {
        "bleu": token_bleu(predictions, truths),
        "exact_match": exact_match(predictions, truths),
    }
    if images:
        from attnkit.apps.im2latex.image_match import image_match_rate

        row.update(image_match_rate(list(map(list, predictions)), list(map(list, truths))))
    return row
