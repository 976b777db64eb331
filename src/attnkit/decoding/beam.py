"""Batched beam search with GNMT length normalisation, in a few small steps.

Every sentence keeps ``K`` live hypotheses ("beams"). One step (:func:`_advance`): score all
``K * V`` one-token continuations of a sentence's beams by their log-probability sums, keep
the top ``K``, and reorder the tokens, the attention history and the decoder state to follow
the beam each survivor came from. Survivors that end in EOS are moved to the sentence's list
of finished hypotheses (:func:`_collect_finished`) and leave an empty slot (score ``-inf``);
the next step refills all ``K`` slots from the remaining beams' continuations. Hence beam
size 1 is exactly greedy decoding, whatever the length penalty. At the first step only beam 0
is live (the others start at ``-inf``), so the ``K`` beams are not ``K`` copies of one.

The model's state is built once per sentence and repeated per beam, except for its
:func:`~attnkit.modules.seq2seq.shared_by_beams` parts (the Transformer's projected memory),
which keep one row per sentence: a step reorders beams within their sentences only, so those
are selected only when finished sentences leave the batch.

Finished hypotheses are ranked by ``score / lp(|Y|)`` with ``lp`` GNMT's length penalty
(Wu et al. 2016, eq. (14); :func:`~attnkit.decoding.hypothesis.length_penalty`).

**Stopping rule** (per sentence; :func:`_sentence_done`). A sentence stops when

1. it has no live beam left, or
2. it reached its step limit ``min(max_len, ratio * S + offset)``, or
3. it has at least ``n_best`` finished hypotheses and no live beam can still beat the
   ``n_best``-th best of them. A live beam with log-probability sum ``s <= 0`` after ``t``
   steps can only end with a sum ``s' <= s`` (log-probabilities are ``<= 0``) at some length
   ``t' in [t + 1, limit]``, so its final normalised score is at most
   ``s / max(lp(t + 1), lp(limit))`` (``lp`` is monotone in ``|Y|``, so the maximum is at
   an end). With ``alpha = 0`` this is ``s`` itself; with ``alpha > 0`` it is
   ``s / lp(limit)``, which is loose, so such searches often run to the limit. The bound
   is safe (never below what a live beam can reach), so stopping early returns what running
   every sentence to its limit would return; bounding by ``s / lp(t)``, the beam's current
   length, is not safe for ``alpha > 0`` (a later, longer hypothesis can still win).
   Ties stop the search (a live beam must strictly beat the ``n_best``-th).

At the limit, if a sentence has fewer than ``n_best`` finished hypotheses, its live beams are
added as unfinished ones (``finished=False``). Results rank finished hypotheses before
unfinished ones, each by normalised score. Sentences that stopped are pruned from the batch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch import Tensor

from attnkit.decoding.hypothesis import (
    Hypothesis,
    append_attention,
    max_lengths,
    select_rows,
    strip_attention,
)
from attnkit.decoding.hypothesis import length_penalty as _lp
from attnkit.modules.seq2seq import Seq2SeqModel, reorder_state


@dataclass
class _Beams:
    """The live search of the ``b`` sentences still decoding; after ``t`` steps, row
    ``i * K + k`` is beam ``k`` of active sentence ``i``.

    Attributes:
        sentences: ``(b,)`` batch index of each active sentence.
        scores: ``(b, K)`` log-probability sums; ``-inf`` marks an empty slot.
        tokens: ``(b * K, t)`` tokens chosen so far (no BOS).
        attention: ``{name: (b * K, t, H, K_keys)}`` per-step weights, or None.
    """

    sentences: Tensor
    scores: Tensor
    tokens: Tensor
    attention: dict[str, Tensor] | None


@torch.no_grad()
def beam_search(
    model: Seq2SeqModel,
    src: Tensor,
    src_mask: Tensor,
    *,
    beam_size: int,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    n_best: int = 1,
    max_len: int | None = None,
    max_len_ratio: float = 1.5,
    max_len_offset: int = 10,
    need_weights: bool = False,
) -> list[list[Hypothesis]]:
    """Beam search over ``src (B, S)`` (``src_mask (B, S)`` True at real tokens).

    Args:
        beam_size: ``K``, the live hypotheses kept per sentence.
        bos_id, eos_id: the first input token and the token that ends a hypothesis.
        length_penalty: GNMT ``alpha``; 0 ranks by the plain log-probability sum.
        n_best: hypotheses returned per sentence (``<= beam_size``).
        max_len, max_len_ratio, max_len_offset: at most ``min(max_len, ratio * S + offset)``
            steps for a sentence with ``S`` real source tokens (EOS counts as a step).
        need_weights: record each hypothesis' attention, reordered with its beam, and return
            it with the padding stripped (see :class:`Hypothesis`).

    Returns:
        Per sentence, up to ``n_best`` hypotheses, best first (see the module docstring for
        the ranking and the stopping rule). Call ``model.eval()`` first.
    """
    if not 1 <= n_best <= beam_size:
        raise ValueError(f"need 1 <= n_best <= beam_size, got n_best={n_best}, K={beam_size}")
    k, b = beam_size, src.size(0)
    limits = max_lengths(src_mask, max_len, max_len_ratio, max_len_offset)  # (B,)
    encoded = model.encode(src, src_mask)  # B rows
    sentence_of = torch.arange(b, device=src.device).repeat_interleave(k)  # (B * K,)
    memory = reorder_state(encoded, sentence_of)  # B * K rows
    # shared_by_beams parts of the state stay at one row per sentence
    state = reorder_state(model.init_state(encoded), sentence_of, sentences=None)
    beams = _start(b, k, src.device, need_weights)
    prev = torch.full((b * k,), bos_id, dtype=torch.long, device=src.device)  # (B * K,)
    found, t = _Found([[] for _ in range(b)], src_mask, length_penalty), 0
    while beams.sentences.numel():
        t += 1
        out = model.decode_step(memory, state, prev, need_weights)
        logits = out.logits.view(-1, k, out.logits.size(-1))  # (b, K, V)
        beams, rows = _advance(beams, logits, out.attention if need_weights else None)
        beams = _collect_finished(beams, found, eos_id, t)
        done = _sentences_done(beams, found, t, limits, n_best)  # (b,)
        _collect_unfinished(beams, found, done, t, n_best)
        kept = None  # the active sentences that go on; None: all of them
        if done.any():
            kept, keep = (~done).nonzero().flatten(), _kept_rows(done, k)  # (b',), (b' * K,)
            beams = _select(beams, ~done, keep)
            rows, memory = rows.index_select(0, keep), reorder_state(memory, keep)
        state = reorder_state(out.state, rows, sentences=kept)
        prev = beams.tokens[:, -1]  # (b * K,)
    return [_ranked(r)[:n_best] for r in found.results]


@dataclass
class _Found:
    """Where hypotheses go: per-sentence lists, plus what turning a row into one needs."""

    results: list[list[Hypothesis]]
    src_mask: Tensor
    alpha: float

    def add(self, beams: _Beams, row: int, t: int, finished: bool) -> None:
        """Store beam row ``row`` after ``t`` steps (its last token is EOS if finished)."""
        k = beams.scores.size(1)
        sentence = int(beams.sentences[row // k])
        score = float(beams.scores.view(-1)[row])
        attention = None
        if beams.attention is not None:
            attention = strip_attention(beams.attention, row, t, self.src_mask[sentence])
        hyp = Hypothesis(
            tokens=beams.tokens[row, : t - int(finished)].tolist(),
            score=score,
            normalised_score=score / _lp(t, self.alpha),
            finished=finished,
            attention=attention,
        )
        self.results[sentence].append(hyp)


def _start(b: int, k: int, device, need_weights: bool) -> _Beams:
    """All sentences active; only beam 0 live (score 0), the others empty (``-inf``)."""
    scores = torch.full((b, k), float("-inf"), device=device)  # (B, K); promoted to float64
    # by the first step if the model's logits are float64
    scores[:, 0] = 0.0
    tokens = torch.zeros(b * k, 0, dtype=torch.long, device=device)  # (B * K, 0)
    sentences = torch.arange(b, device=device)  # (B,)
    return _Beams(sentences, scores, tokens, {} if need_weights else None)


def _advance(
    beams: _Beams, logits: Tensor, attention: dict[str, Tensor] | None
) -> tuple[_Beams, Tensor]:
    """Keep the top ``K`` of the ``K * V`` continuations of the beams' ``logits (b, K, V)``.

    A continuation among a sentence's ``K`` best must be among its own beam's ``K`` best, so
    each beam proposes its top ``min(K, V)`` tokens and the sentence keeps the best ``K`` of
    those. The log-probability of token ``y`` is ``logit_y - logsumexp(logits)``, so the
    full ``(b, K, V)`` log-softmax is never written (the same ranking and scores).

    Returns the new beams (tokens and attention history reordered to follow their parents,
    this step's attention appended) and ``rows (b * K,)``: each new beam's parent row, by
    which the decoder state must be reordered.
    """
    b, k, v = logits.shape
    m = min(k, v)  # proposals per beam (a beam wider than the vocabulary proposes every token)
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))  # as log_probs
    top, best = logits.topk(m, dim=-1)  # (b, K, m): each beam's m best tokens
    logp = top - _logsumexp(logits, top[..., :1])  # (b, K, m)
    total = (beams.scores.unsqueeze(-1) + logp).view(b, k * m)  # (b, K * m)
    scores, flat = total.topk(k, dim=1)  # (b, K)
    parent, token = flat // m, best.view(b, k * m).gather(1, flat)  # (b, K)
    offsets = torch.arange(b, device=logp.device).unsqueeze(1) * k  # (b, 1)
    rows = (parent + offsets).view(-1)  # (b * K,)
    tokens = torch.cat([beams.tokens.index_select(0, rows), token.view(-1, 1)], 1)  # (b*K, t)
    history = beams.attention
    if attention is not None:
        history = select_rows(append_attention(history, attention), rows)
    return _Beams(beams.sentences, scores, tokens, history), rows


def _logsumexp(logits: Tensor, maxes: Tensor) -> Tensor:
    """``torch.logsumexp(logits, -1, keepdim=True)`` with the row maxima ``maxes (b, K, 1)``
    already known (the first of the top-k), so the pass that finds them is saved; the same
    steps as PyTorch's, so the same numbers: ``log(sum(exp(x - m))) + m``, with ``m = 0``
    where the maximum is infinite."""
    maxes = maxes.masked_fill(maxes.isinf(), 0.0)  # (b, K, 1)
    return (logits - maxes).exp_().sum(-1, keepdim=True).log_().add_(maxes)  # (b, K, 1)


def _collect_finished(beams: _Beams, found: _Found, eos_id: int, t: int) -> _Beams:
    """Move live beams that just produced EOS to the finished lists; empty their slots."""
    ended = (beams.tokens[:, -1] == eos_id).view_as(beams.scores) & beams.scores.isfinite()
    for row in ended.view(-1).nonzero().flatten().tolist():
        found.add(beams, row, t, finished=True)
    return dataclasses.replace(beams, scores=beams.scores.masked_fill(ended, float("-inf")))


def _sentences_done(beams: _Beams, found: _Found, t: int, limits: Tensor, n_best: int) -> Tensor:
    """``(b,)`` bool: which active sentences stop after step ``t`` (module docstring rule)."""
    best_live = beams.scores.max(1).values.tolist()  # (b,)
    done = [
        _sentence_done(found.results[s], best_live[i], t, int(limits[s]), n_best, found.alpha)
        for i, s in enumerate(beams.sentences.tolist())
    ]
    return torch.tensor(done, dtype=torch.bool, device=beams.scores.device)


def _sentence_done(
    finished: list[Hypothesis], best_live: float, t: int, limit: int, n_best: int, alpha: float
) -> bool:
    """Stop when out of steps or beams, or when no live beam can enter the ``n_best``."""
    if t >= limit or best_live == float("-inf"):
        return True
    if len(finished) < n_best:
        return False
    worst_kept = sorted(h.normalised_score for h in finished)[-n_best]
    best_possible = min(best_live, 0.0) / max(_lp(t + 1, alpha), _lp(limit, alpha))
    return worst_kept >= best_possible


def _collect_unfinished(beams: _Beams, found: _Found, done: Tensor, t: int, n_best: int):
    """Stopped sentences short of ``n_best`` finished hypotheses keep their live beams."""
    k = beams.scores.size(1)
    for i in done.nonzero().flatten().tolist():
        if len(found.results[int(beams.sentences[i])]) >= n_best:
            continue
        for j in beams.scores[i].isfinite().nonzero().flatten().tolist():
            found.add(beams, i * k + j, t, finished=False)


def _kept_rows(done: Tensor, k: int) -> Tensor:
    """``(b' * K,)`` rows of the sentences not ``done (b,)``."""
    kept = (~done).nonzero().flatten()  # (b',)
    return (kept.unsqueeze(1) * k + torch.arange(k, device=done.device)).view(-1)


def _select(beams: _Beams, keep: Tensor, rows: Tensor) -> _Beams:
    """Prune stopped sentences: ``keep (b,)`` bool, ``rows`` their beam rows."""
    return _Beams(
        beams.sentences[keep],
        beams.scores[keep],
        beams.tokens.index_select(0, rows),
        select_rows(beams.attention, rows),
    )


def _ranked(hyps: list[Hypothesis]) -> list[Hypothesis]:
    """Finished before unfinished, then by normalised score, best first."""
    return sorted(hyps, key=lambda h: (h.finished, h.normalised_score), reverse=True)
