"""The paper's measures (Deng et al. 2017, §5): BLEU-4 on token sequences, exact token match,
and image match (render both, compare pixels; :mod:`~attnkit.apps.im2latex.image_match`).

BLEU is sacreBLEU's corpus BLEU with ``tokenize="none"`` on the space-joined tokens, so the
paper's tokenisation is the one scored (Post 2018 on reproducible BLEU).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
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


def scale_quartiles(
    scales: Sequence[float], predictions: Sequence[Sequence[str]], truths: Sequence[Sequence[str]]
) -> list[dict]:
    """Exact match and BLEU per quartile of the scale the formulas were drawn at (generated
    splits; :mod:`~attnkit.apps.im2latex.examples`), smallest first: each quartile's scale
    range, count and scores. Empty when no scales are known (real formulas)."""
    if not scales:
        return []
    if len(scales) != len(truths):
        raise ValueError(f"{len(scales)} scales but {len(truths)} truths")
    order = np.argsort(np.asarray(scales), kind="stable")
    out = []
    for part in np.array_split(order, 4):
        if not len(part):
            continue
        p, t = [predictions[i] for i in part], [truths[i] for i in part]
        out.append({
            "scale": [float(scales[part[0]]), float(scales[part[-1]])],
            "n": len(part),
            "exact_match": exact_match(p, t),
            "bleu": token_bleu(p, t),
        })  # fmt: skip
    return out
