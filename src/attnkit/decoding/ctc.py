"""Decoding connectionist temporal classification (Graves, Fernández, Gomez & Schmidhuber 2006).

A CTC model emits, at every frame ``t``, a distribution ``y^t`` over the labels and a *blank*.
A frame path ``pi`` maps to a labelling by the many-to-one map ``B`` (§3.1): merge repeated
labels, then drop the blanks, so ``"7 7 _ 7" -> "7 7"`` needs the blank between the two
sevens and ``"7 7 7" -> "7"``. ``p(l | x) = sum_{pi in B^-1(l)} prod_t y^t_{pi_t}`` (eqs. (1)-(2)).

- :func:`ctc_greedy_decode`: best path decoding (§3.2, eq. (4)), ``B(argmax_t y^t)``, frame by
  frame; exact for the best *path*, an approximation of the best *labelling*.
- :func:`ctc_prefix_beam_search`: prefix beam search (Hannun, Maas, Jurafsky & Ng 2014,
  arXiv:1408.2873, Algorithm 1, without a language model): keeps ``beam`` labelling prefixes,
  each with the probability of its paths ending in a blank and in a label, so that it sums
  ``p(l | x)`` over paths; with a beam as wide as the number of prefixes it is exact.
- :func:`ctc_log_likelihood` and :func:`rescore_with_ctc`: a joint CTC-attention model's
  attention N-best rescored with its CTC head, ``lambda log p_ctc(y|x) + (1 - lambda) log
  p_att(y|x)`` (Watanabe, Hori, Kim, Hershey & Hayashi 2017, "Hybrid CTC/Attention
  Architecture for End-to-End Speech Recognition", joint decoding by rescoring): CTC
  counts a hypothesis that skips or repeats a stretch of speech as unlikely however fluent
  the attention decoder finds it.

Log-probabilities are ``(B, T, V)`` batch first (``torch.nn.CTCLoss`` takes ``(T, B, V)``);
``lengths (B,)`` the valid frames of each sequence, the rest ignored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

NEG_INF = float("-inf")


def ctc_collapse(path: Sequence[int], blank: int = 0) -> list[int]:
    """The map ``B`` of Graves et al. 2006, §3.1: merge repeats, then drop blanks."""
    labels, previous = [], None
    for token in path:
        if token != previous and token != blank:
            labels.append(int(token))
        previous = token
    return labels


def _checked_lengths(log_probs: Tensor, lengths, blank: int) -> list[int]:
    """``lengths`` as a list of ints in ``[0, T]`` (all ``T`` when None), after checking shapes."""
    if log_probs.dim() != 3:
        raise ValueError(f"log_probs must be (B, T, V), got shape {tuple(log_probs.shape)}")
    batch, frames, vocab = log_probs.shape
    if not 0 <= blank < vocab:
        raise ValueError(f"blank index {blank} is outside the {vocab} labels")
    if lengths is None:
        return [frames] * batch
    lengths = [int(n) for n in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]
    if len(lengths) != batch or any(not 0 <= n <= frames for n in lengths):
        raise ValueError(f"lengths {lengths} must be {batch} values in [0, {frames}]")
    return lengths


def ctc_greedy_decode(
    log_probs: Tensor, lengths: Tensor | Sequence[int] | None = None, blank: int = 0
) -> list[list[int]]:
    """Best path decoding (Graves et al. 2006, §3.2, eq. (4)): ``B(pi*)`` with ``pi*_t =
    argmax_k y^t_k`` over each sequence's first ``lengths[b]`` frames.

    ``log_probs (B, T, V)`` (probabilities or logits work too: only the argmax is used);
    returns one list of label ids per sequence.
    """
    lengths = _checked_lengths(log_probs, lengths, blank)
    best = log_probs.argmax(-1).tolist()  # (B, T): pi*_t
    return [ctc_collapse(path[:n], blank) for path, n in zip(best, lengths, strict=True)]


def _log_add(*terms: float) -> float:
    """``log(sum(exp(terms)))`` of plain floats, with ``-inf`` for an empty sum."""
    top = max(terms)
    if top == NEG_INF:
        return NEG_INF
    return top + math.log(sum(math.exp(term - top) for term in terms))


def _extend(beams: dict, frame: list[float], blank: int) -> dict:
    """One frame of Hannun et al. 2014, Algorithm 1: every prefix ``(p_blank, p_label)`` (log)
    extended by every label of ``frame`` ``(V,)``."""
    grown: dict[tuple, list[float]] = {}

    def add(prefix: tuple, which: int, value: float) -> None:
        probs = grown.setdefault(prefix, [NEG_INF, NEG_INF])
        probs[which] = _log_add(probs[which], value)

    for prefix, (p_blank, p_label) in beams.items():
        last = prefix[-1] if prefix else None
        for token, p in enumerate(frame):
            if token == blank:  # the prefix stays, now ending in a blank
                add(prefix, 0, _log_add(p_blank, p_label) + p)
            elif token == last:
                add(prefix, 1, p_label + p)  # a repeat merged into the same label
                add((*prefix, token), 1, p_blank + p)  # a new label after a blank
            else:
                add((*prefix, token), 1, _log_add(p_blank, p_label) + p)
    return grown


def _beam_of_one(frames: list[list[float]], beam: int, blank: int) -> list[tuple[list, float]]:
    """Prefix beam search over one sequence's ``frames (T, V)`` of log-probabilities."""
    beams: dict[tuple, list[float]] = {(): [0.0, NEG_INF]}
    for frame in frames:
        grown = _extend(beams, frame, blank)
        # a prefix no path reaches (a repeat with no frame left for its blank) has p = 0
        possible = [item for item in grown.items() if _log_add(*item[1]) > NEG_INF]
        beams = dict(sorted(possible, key=lambda item: -_log_add(*item[1]))[:beam])
    ranked = sorted(
        ((list(p), _log_add(*probs)) for p, probs in beams.items()), key=lambda x: -x[1]
    )
    return ranked


def ctc_prefix_beam_search(
    log_probs: Tensor,
    lengths: Tensor | Sequence[int] | None = None,
    beam: int = 8,
    blank: int = 0,
) -> list[list[tuple[list[int], float]]]:
    """Prefix beam search (Hannun et al. 2014, Algorithm 1; no language model) over CTC outputs.

    ``log_probs (B, T, V)`` must be log-probabilities (log-softmax over ``V``). Returns, per
    sequence, up to ``beam`` ``(labels, log p(labels | x))`` pairs, best first; the
    probability sums the paths that the beam kept (all of them when the beam holds every
    prefix, then it is Graves et al. 2006's ``p(l | x)``, eq. (2)).
    """
    if beam < 1:
        raise ValueError(f"beam must be >= 1, got {beam}")
    lengths = _checked_lengths(log_probs, lengths, blank)
    rows = log_probs.detach().to("cpu", torch.float64).tolist()  # (B, T, V)
    return [_beam_of_one(row[:n], beam, blank) for row, n in zip(rows, lengths, strict=True)]


def ctc_log_likelihood(
    log_probs: Tensor, lengths: Tensor, labellings: Sequence[Sequence[int]], blank: int = 0
) -> Tensor:
    """``log p(l | x)`` (eqs. (1)-(2), all paths summed, by ``torch.nn.functional.ctc_loss``)
    of ``labellings[i]`` under row ``i`` of ``log_probs (N, T, V)`` with ``lengths (N,)``
    frames: ``(N,)``, ``-inf`` where a labelling cannot be emitted in its frames."""
    targets = [torch.as_tensor(list(lab), dtype=torch.long) for lab in labellings]
    flat = torch.cat(targets) if targets else torch.zeros(0, dtype=torch.long)
    target_lengths = torch.tensor([len(t) for t in targets], dtype=torch.long)
    wide = log_probs if log_probs.dtype == torch.float64 else log_probs.float()  # bf16 -> fp32
    nll = torch.nn.functional.ctc_loss(
        wide.transpose(0, 1), flat.to(log_probs.device), lengths.long(),
        target_lengths.to(log_probs.device), blank=blank, reduction="none", zero_infinity=False,
    )  # fmt: skip
    return -nll  # (N,)


def rescore_with_ctc(
    nbest: Sequence[Sequence], log_probs: Tensor, lengths: Tensor, weight: float, blank: int = 0
) -> list[list]:
    """Each sentence's hypotheses (:class:`~attnkit.decoding.hypothesis.Hypothesis`, their
    ``score`` the attention log-probability) re-ranked by ``weight * log p_ctc(tokens | x) +
    (1 - weight) * score``, best first; ``log_probs (B, T, V)``, ``lengths (B,)`` the CTC head's
    output for the ``B`` sentences (module docstring)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the CTC weight must lie in [0, 1], got {weight}")
    rows = [i for i, hyps in enumerate(nbest) for _ in hyps]
    if not rows:
        return [[] for _ in nbest]
    index = torch.tensor(rows, device=log_probs.device)
    ctc = ctc_log_likelihood(
        log_probs.index_select(0, index), lengths.to(log_probs.device).index_select(0, index),
        [h.tokens for hyps in nbest for h in hyps], blank,
    ).tolist()  # fmt: skip
    out, at = [], 0
    for hyps in nbest:
        joint = [
            (weight * ctc[at + j] if weight else 0.0) + (1 - weight) * h.score
            for j, h in enumerate(hyps)
        ]  # weight 0: the attention's order, even where CTC says -inf
        at += len(hyps)
        order = sorted(range(len(hyps)), key=lambda j: -joint[j])
        out.append([hyps[j] for j in order])
    return out
