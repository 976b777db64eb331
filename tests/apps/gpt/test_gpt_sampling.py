"""Sampling: top-k and top-p keep exactly the allowed tokens, temperature 0 is greedy, a seed
makes sampling reproducible, and bad settings are refused in one line."""

import pytest
import torch

from attnkit.apps.gpt.generate import Sampling, filter_logits, next_token


def test_top_k_keeps_the_k_largest_and_ties_with_the_kth():
    logits = torch.tensor([[1.0, 5.0, 3.0, 3.0, -2.0, 4.0]])
    kept = filter_logits(logits, top_k=3, top_p=None).isfinite()[0].tolist()
    assert kept == [False, True, True, True, False, True]  # 5, 4 and both 3s (a tie)
    kept = filter_logits(logits, top_k=2, top_p=None).isfinite()[0].tolist()
    assert kept == [False, True, False, False, False, True]


def test_top_p_keeps_the_smallest_set_reaching_p():
    probs = torch.tensor([[0.05, 0.5, 0.2, 0.25]])
    logits = probs.log()
    for p, expected in (
        (0.5, [False, True, False, False]),  # 0.5 alone reaches 0.5
        (0.6, [False, True, False, True]),  # 0.5 + 0.25
        (0.95, [False, True, True, True]),  # 0.95
        (0.96, [True, True, True, True]),
        (0.01, [False, True, False, False]),  # the most probable always stays
    ):
        assert filter_logits(logits, None, p).isfinite()[0].tolist() == expected, p


def test_sampling_keeps_to_the_allowed_tokens_and_repeats_with_a_seed():
    logits = torch.randn(4, 50, generator=torch.Generator().manual_seed(0))
    how = Sampling(temperature=1.5, top_k=3)
    allowed = torch.topk(logits, 3).indices
    draws = [next_token(logits, how, torch.Generator().manual_seed(s)) for s in range(30)]
    for d in draws:
        assert all(int(d[i, 0]) in allowed[i].tolist() for i in range(4))
    again = [next_token(logits, how, torch.Generator().manual_seed(s)) for s in range(30)]
    assert all(torch.equal(a, b) for a, b in zip(draws, again, strict=True))
    assert len({tuple(d[:, 0].tolist()) for d in draws}) > 1  # it does sample


def test_temperature_zero_is_the_argmax():
    logits = torch.randn(3, 20)
    token = next_token(logits, Sampling(temperature=0), None)
    assert torch.equal(token[:, 0], logits.argmax(-1))


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(temperature=-1.0), "temperature must be >= 0"),
        (dict(top_k=0), "top_k must be >= 1"),
        (dict(top_p=0.0), r"top_p must be in \(0, 1\]"),
        (dict(top_p=1.5), r"top_p must be in \(0, 1\]"),
    ],
)
def test_bad_sampling_settings_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        Sampling(**options)
