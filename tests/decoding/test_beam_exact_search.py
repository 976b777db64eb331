"""Beam search against exhaustive search on lookup-table models (exact and fast).

What is guaranteed, and tested here: beam search with a beam wide enough never to prune
(``K >=`` the number of one-token continuations at every step) is exact search, so its
n-best list is the true n-best under the length-normalised score, for any ``alpha``; and
stopping early (the rule in :mod:`attnkit.decoding.beam`) returns what running to the limit
returns. What is NOT guaranteed: that a narrow beam (``1 < K`` small) scores at least as well
as greedy. ``test_narrow_beam_can_lose_to_greedy`` shows a model where it does not.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from decoding_helpers import (
    BOS,
    EOS,
    MODEL_IDS,
    TableModel,
    counting,
    force_decode,
    make_model,
    random_table_model,
    source_batch,
)

import attnkit.decoding.beam as beam_module
from attnkit.decoding import Hypothesis, beam_search, greedy_decode, length_penalty

KW = {"bos_id": BOS, "eos_id": EOS}


def all_finished(model, src, mask, i, vocab, max_steps, alpha) -> list[Hypothesis]:
    """Every hypothesis ending in EOS within ``max_steps`` steps, scored by forced decoding."""
    words = [w for w in range(vocab) if w != EOS]
    hyps = []
    for n in range(max_steps):
        for tokens in itertools.product(words, repeat=n):
            h = Hypothesis(list(tokens), 0.0, 0.0, finished=True)
            h.score = force_decode(model, src, mask, i, h)[0]
            h.normalised_score = h.score / length_penalty(h.length, alpha)
            hyps.append(h)
    return sorted(hyps, key=lambda h: h.normalised_score, reverse=True)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0, -0.5])
def test_wide_beam_is_exact_search(alpha):
    """V = 5, at most 4 steps: a beam of 4^3 * 5 = 320 prunes nothing; its 10-best list is
    the exhaustive 10-best (so it also scores at least as well as greedy)."""
    vocab, steps, n_best = 5, 4, 10
    model, (src, mask) = random_table_model(vocab), source_batch()
    beam = beam_search(
        model, src, mask, beam_size=320, n_best=n_best, length_penalty=alpha, max_len=steps, **KW
    )
    greedy = greedy_decode(model, src, mask, max_len=steps, length_penalty=alpha, **KW)
    for i, found in enumerate(beam):
        expected = all_finished(model, src, mask, i, vocab, steps, alpha)[:n_best]
        assert [h.tokens for h in found] == [h.tokens for h in expected]
        for f, e in zip(found, expected, strict=True):
            assert f.normalised_score == pytest.approx(e.normalised_score, abs=1e-9)
        if greedy[i].finished:
            assert found[0].normalised_score >= greedy[i].normalised_score - 1e-9


def table_from_rows(vocab: int, rows: dict[tuple[int, ...], dict[int, float]]) -> TableModel:
    """A :class:`TableModel` with the given next-token probabilities after the given inputs
    (BOS first); other tokens get 1e-12, unlisted inputs a uniform distribution."""
    model = TableModel(torch.zeros(1, (vocab + 1) ** 4, vocab, dtype=torch.float64))
    for inputs, probs in rows.items():
        p = torch.full((vocab,), 1e-12, dtype=torch.float64)
        p[list(probs)] = torch.tensor(list(probs.values()), dtype=torch.float64)
        model.table[0, model.code(list(inputs))] = p.log()
    return model


ONE_SOURCE = torch.tensor([[3]]), torch.tensor([[True]])


def test_narrow_beam_can_lose_to_greedy():
    """Greedy: a (0.4), a (0.3), EOS (0.99) = 0.1188. With K = 2 the beams after step 2 are
    (b, a) and (b, c) (0.182, 0.168 > 0.12), whose best ending is b a EOS = 0.0546."""
    a, b, c = 3, 4, 5
    after_b = {EOS: 0.3, a: 0.7 / 3, b: 0.7 / 3, c: 0.7 / 3}
    model = table_from_rows(
        6,
        {
            (BOS,): {a: 0.4, b: 0.35, c: 0.25},
            (BOS, a): {a: 0.3, b: 0.26, c: 0.24, EOS: 0.2},
            (BOS, a, a): {EOS: 0.99, a: 0.01},
            (BOS, b): {a: 0.52, c: 0.48},
            (BOS, b, a): after_b,
            (BOS, b, c): after_b,
        },
    )
    kw = {"length_penalty": 0.0, "max_len": 3, **KW}
    greedy = greedy_decode(model, *ONE_SOURCE, max_len=3, **KW)[0]
    beam = beam_search(model, *ONE_SOURCE, beam_size=2, **kw)[0][0]
    assert greedy.tokens == [a, a] and greedy.score == pytest.approx(torch.tensor(0.1188).log())
    assert beam.tokens == [b, a] and beam.score == pytest.approx(torch.tensor(0.0546).log())
    assert beam_search(model, *ONE_SOURCE, beam_size=3, **kw)[0][0].tokens == [a, a]


def test_stopping_rule_waits_for_longer_hypotheses():
    """alpha = 2: [] scores log 0.6 / lp(1) = -0.51 at step 1, while the live beam (a, log 0.4
    = -0.92) ends as [a, a, a] with -0.92 / lp(4) = -0.41. Bounding the live beam by its
    score over lp of its *current* length (-0.92) would stop at step 1 and return []."""
    a = 3
    model = table_from_rows(
        5,
        {
            (BOS,): {EOS: 0.6, a: 0.4},
            (BOS, a): {a: 1.0},
            (BOS, a, a): {a: 1.0},
            (BOS, a, a, a): {EOS: 1.0},
        },
    )
    kw = {"length_penalty": 2.0, "max_len": 4, **KW}
    assert greedy_decode(model, *ONE_SOURCE, **kw)[0].tokens == []
    best = beam_search(model, *ONE_SOURCE, beam_size=2, **kw)[0][0]
    assert best.tokens == [a, a, a] and best.finished
    assert best.normalised_score == pytest.approx(float(torch.tensor(0.4).log()) / 2.25)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_early_stopping_changes_nothing(monkeypatch, alpha):
    """Running every sentence to its limit returns the same n-best lists; at alpha = 0 the
    rule also saves steps."""
    models = [make_model(m) for m in (*MODEL_IDS[:4], MODEL_IDS[-1])] + [random_table_model()]
    src, mask = source_batch()
    kw = {"beam_size": 4, "n_best": 2, "length_penalty": alpha, "max_len_offset": 4, **KW}
    runs = []
    for patch in (False, True):
        if patch:
            monkeypatch.setattr(
                beam_module,
                "_sentence_done",
                lambda _f, live, t, limit, *_: t >= limit or live == float("-inf"),
            )
        calls = [counting(m) for m in models]
        runs.append(([beam_search(m, src, mask, **kw) for m in models], [c[0] for c in calls]))
    (early, early_calls), (full, full_calls) = runs
    for e, f in zip(early, full, strict=True):
        for e_hyps, f_hyps in zip(e, f, strict=True):
            assert [(h.tokens, h.score) for h in e_hyps] == [(h.tokens, h.score) for h in f_hyps]
    assert all(n <= m for n, m in zip(early_calls, full_calls, strict=True))
    if alpha == 0.0:
        assert sum(early_calls) < sum(full_calls)
