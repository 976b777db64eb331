"""Batched greedy decoding: at every step take the most probable token.

``y_t = argmax_y log p(y | y_<t, x)``, for all sentences of a batch at once, each stopping at
its own EOS or step limit (:func:`~attnkit.decoding.hypothesis.max_lengths`); the loop ends
when every sentence has stopped. Sentences that stopped are still run through the model (their
rows are ignored), which keeps the code short; beam search prunes them instead.
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnkit.decoding.hypothesis import (
    Hypothesis,
    append_attention,
    log_probs,
    max_lengths,
    strip_attention,
)
from attnkit.decoding.hypothesis import length_penalty as _lp
from attnkit.modules.seq2seq import Seq2SeqModel


@torch.no_grad()
def greedy_decode(
    model: Seq2SeqModel,
    src: Tensor,
    src_mask: Tensor,
    *,
    bos_id: int,
    eos_id: int,
    max_len: int | None = None,
    max_len_ratio: float = 1.5,
    max_len_offset: int = 10,
    need_weights: bool = False,
    length_penalty: float = 0.0,
) -> list[Hypothesis]:
    """Greedy decoding of ``src (B, S)`` (``src_mask (B, S)`` True at real tokens).

    Args:
        bos_id, eos_id: the first input token and the token that ends a sentence.
        max_len, max_len_ratio, max_len_offset: at most ``min(max_len, ratio * S + offset)``
            steps for a sentence with ``S`` real source tokens (EOS counts as a step).
        need_weights: return each sentence's attention, padding stripped (see
            :class:`~attnkit.decoding.hypothesis.Hypothesis`).
        length_penalty: ``alpha`` of the GNMT penalty used only to fill
            ``normalised_score`` (the search itself does not depend on it).

    Returns:
        One :class:`Hypothesis` per sentence, in batch order. Call ``model.eval()`` first:
        dropout is not switched off here.
    """
    limits = max_lengths(src_mask, max_len, max_len_ratio, max_len_offset)  # (B,)
    memory = model.encode(src, src_mask)
    state = model.init_state(memory)
    b = src.size(0)
    prev = torch.full((b,), bos_id, dtype=torch.long, device=src.device)  # (B,)
    scores = None  # (B,) log-probability sums, in the dtype of the log-probabilities
    steps = torch.zeros(b, dtype=torch.long, device=src.device)  # (B,) tokens scored so far
    ended = torch.zeros(b, dtype=torch.bool, device=src.device)  # (B,) produced EOS
    outputs, history = [], None
    for _ in range(int(limits.max())):
        out = model.decode_step(memory, state, prev, need_weights)
        logp, token = log_probs(out.logits).max(-1)  # (B,), (B,)
        live = ~ended & (steps < limits)  # (B,)
        logp = torch.where(live, logp, torch.zeros_like(logp))
        scores = logp if scores is None else scores + logp
        steps += live.long()
        ended |= live & (token == eos_id)
        outputs.append(token)
        if need_weights:
            history = append_attention(history, out.attention)
        if not (~ended & (steps < limits)).any():
            break
        prev, state = token, out.state
    tokens = torch.stack(outputs, 1)  # (B, T)
    return [
        _hypothesis(tokens, scores, steps, ended, history, src_mask, i, length_penalty)
        for i in range(b)
    ]


def _hypothesis(tokens, scores, steps, ended, history, src_mask, i, alpha) -> Hypothesis:
    """Sentence ``i``'s :class:`Hypothesis` from the batched step records."""
    n, finished = int(steps[i]), bool(ended[i])
    score = float(scores[i])
    attention = None if history is None else strip_attention(history, i, n, src_mask[i])
    return Hypothesis(
        tokens=tokens[i, : n - int(finished)].tolist(),
        score=score,
        normalised_score=score / _lp(n, alpha),
        finished=finished,
        attention=attention,
    )
