"""Training examples and scoring for next-item models, as the SASRec authors' code makes them
(kang205/SASRec ``sampler.py`` and ``util.evaluate``), seeded so a resumed run continues
exactly.

- :func:`training_example`: a user's training items ``s_1 .. s_m`` as input ``s_1 .. s_{m-1}``
  and next items ``s_2 .. s_m`` (the last ``max_len`` of each, left-padded with 0), and one
  negative per position drawn uniformly from the items the user never had in training (Kang &
  McAuley 2018, §III-E).
- :func:`history_tensor`: the last ``max_len`` items before a target, left-padded: the input
  that predicts it (for the test target the history ends with the validation item).
- :func:`ranks`: the rank of each user's target among its candidates (sampled protocol) or
  among every item but those of its history (full ranking; Krichene & Rendle 2020).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from attnkit.metrics.ranking import rank_of_target


def left_pad(items: Sequence[int], max_len: int) -> list[int]:
    """The last ``max_len`` of ``items``, with zeros in front to ``max_len``."""
    kept = list(items)[-max_len:]
    return [0] * (max_len - len(kept)) + kept


def training_example(
    items: Sequence[int], n_items: int, max_len: int, rng: np.random.Generator
) -> tuple[list[int], list[int], list[int]]:
    """``(seq, pos, neg)`` each of ``max_len`` ids for one user's training ``items`` (module
    docstring); a negative is never one of the user's training items."""
    seen = set(items)
    if len(seen) >= n_items:
        raise ValueError(f"a user has every one of the {n_items} items: no negative to draw")
    seq, pos = left_pad(items[:-1], max_len), left_pad(items[1:], max_len)
    neg = []
    for p in pos:
        draw = 0
        while p and (draw == 0 or draw in seen):
            draw = int(rng.integers(1, n_items + 1))
        neg.append(draw)  # 0 where there is no next item
    return seq, pos, neg


def history_tensor(histories: Sequence[Sequence[int]], max_len: int) -> torch.Tensor:
    """``(B, max_len)`` left-padded histories."""
    return torch.tensor([left_pad(h, max_len) for h in histories], dtype=torch.long)


@torch.no_grad()
def ranks(
    model, histories: Sequence[Sequence[int]], candidates: Sequence[Sequence[int]] | None,
    targets: Sequence[int], max_len: int, exclude: Sequence[Sequence[int]] | None = None,
    batch_size: int = 256,
) -> np.ndarray:  # fmt: skip
    """0-based rank of each target: among ``candidates[i]`` (target first) when given, else
    among every item (ids ``1 .. n``) with ``exclude[i]`` left out (full ranking). ``model``
    has ``predict(seq (B, L), items) -> (B, N)`` scores."""
    out = []
    device = next(model.parameters()).device if hasattr(model, "parameters") else "cpu"
    for start in range(0, len(histories), batch_size):
        seq = history_tensor(histories[start : start + batch_size], max_len).to(device)
        if candidates is not None:
            items = torch.tensor(candidates[start : start + batch_size], device=device)  # (B, N)
            out.append(rank_of_target(model.predict(seq, items).float().cpu(), 0))
            continue
        scores = model.predict(seq).float().cpu()  # (B, V + 1), column 0 the padding
        rows = range(start, min(start + batch_size, len(histories)))
        for row, i in enumerate(rows):
            row_scores = scores[row].clone()
            row_scores[0] = float("-inf")
            banned = [j for j in (exclude[i] if exclude else []) if j != targets[i]]
            row_scores[banned] = float("-inf")
            out.append(np.atleast_1d(rank_of_target(row_scores, targets[i])))
    return np.concatenate([np.atleast_1d(np.asarray(r)) for r in out]) if out else np.zeros(0)
