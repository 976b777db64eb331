"""Token-count batching: every example once per epoch, the budget kept, correct padding."""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnkit.apps.translation.data.batching import (
    Example,
    TokenBatchSampler,
    collate,
    encode_pairs,
    encode_sources,
    restore_order,
    sorted_batches,
)


def _examples(n: int, seed: int = 0, max_len: int = 40) -> list[Example]:
    rng = random.Random(seed)
    return [
        Example(
            i,
            [rng.randrange(4, 50) for _ in range(rng.randrange(1, max_len))],
            [rng.randrange(4, 50) for _ in range(rng.randrange(1, max_len))],
        )
        for i in range(n)
    ]


def _padded_size(batch: list[Example]) -> int:
    s = max(len(e.src) for e in batch)
    t = max(len(e.tgt) + 1 for e in batch)  # bos + y, or y + eos
    return len(batch) * max(s, t)


@given(
    n=st.integers(1, 120),
    max_tokens=st.integers(45, 600),
    seed=st.integers(0, 5),
)
def test_every_example_once_and_budget_kept(n, max_tokens, seed):
    examples = _examples(n, seed)
    sampler = TokenBatchSampler(examples, max_tokens, seed=seed)
    for _ in range(2):  # two epochs
        batches = list(sampler)
        assert sorted(i for b in batches for i in b) == list(range(n))
        for b in batches:
            chosen = [examples[i] for i in b]
            assert _padded_size(chosen) <= max_tokens
            batch = collate(chosen)
            assert batch.src.numel() <= max_tokens and batch.tgt_in.numel() <= max_tokens
    assert sampler.epoch == 2


def test_epochs_shuffle_reproducibly():
    examples = _examples(300)
    sampler = TokenBatchSampler(examples, 400, seed=1)
    first, second = list(sampler), list(sampler)
    assert first != second and len(first) == len(second) == len(sampler)
    again = TokenBatchSampler(examples, 400, seed=1)
    assert list(again) == first
    sampler.set_epoch(1)
    assert list(sampler) == second
    assert TokenBatchSampler(examples, 400, seed=2).batches(0) != first


def test_bucketing_keeps_padding_low():
    examples = _examples(2000, seed=9)
    batches = TokenBatchSampler(examples, 1000, seed=0).batches(0)
    real = sum(len(e.src) for e in examples)
    padded = sum(len(b) * max(len(examples[i].src) for i in b) for b in batches)
    assert real / padded > 0.85  # random batches of these lengths are about half padding


def test_collate_shapes_masks_and_shift():
    examples = [Example(7, [10, 11, 12], [20, 21]), Example(3, [13], [22, 23, 24, 25])]
    batch = collate(examples)
    assert batch.src.tolist() == [[10, 11, 12], [13, 0, 0]]
    assert batch.src_mask.tolist() == [[True, True, True], [True, False, False]]
    assert batch.tgt_in.tolist() == [[2, 20, 21, 0, 0], [2, 22, 23, 24, 25]]
    assert batch.tgt_out.tolist() == [[20, 21, 3, 0, 0], [22, 23, 24, 25, 3]]
    assert batch.tgt_mask.tolist() == [[True] * 3 + [False] * 2, [True] * 5]
    assert batch.indices.tolist() == [7, 3]
    assert (
        batch.src.dtype == batch.tgt_in.dtype == torch.long and batch.src_mask.dtype == torch.bool
    )
    assert batch.n_tgt_tokens == 8
    # teacher forcing: tgt_out is tgt_in shifted left by one wherever both are real
    assert torch.equal(
        batch.tgt_in[:, 1:][batch.tgt_mask[:, 1:]], batch.tgt_out[:, :-1][batch.tgt_mask[:, 1:]]
    )
    assert batch.to("cpu").src is not None


def test_collate_without_targets_and_empty_source():
    batch = collate([Example(0, []), Example(1, [5, 6])])
    assert batch.src.shape == (2, 2) and batch.tgt_in is None and batch.n_tgt_tokens == 0
    assert batch.src_mask.tolist() == [[False, False], [True, True]]
    assert collate([Example(0, [])]).src.shape == (1, 1)  # never a zero-width tensor
    with pytest.raises(ValueError, match="empty batch"):
        collate([])


def test_an_example_over_the_budget_is_an_error_in_training():
    with pytest.raises(ValueError, match="pair 2 needs 31 tokens, more than max_tokens = 20"):
        TokenBatchSampler([Example(0, [5], [5]), Example(1, [5] * 31, [5])], 20).batches(0)


def test_a_source_over_the_budget_is_translated_alone(caplog):
    """Issue 15: one over-long line failed the whole file with a 0-based index."""
    examples = [Example(0, [5] * 3), Example(1, [5] * 31), Example(2, [5] * 4)]
    batches = sorted_batches(examples, 20)
    assert [1] in batches and sorted(i for b in batches for i in b) == [0, 1, 2]
    assert "sentence 2 has 31 tokens, more than max_tokens = 20" in caplog.text


def test_inference_batches_restore_the_order():
    examples = [Example(e.index, e.src) for e in _examples(57, seed=4)]
    batches = sorted_batches(examples, 120)
    lengths = [len(examples[i].src) for b in batches for i in b]
    assert lengths == sorted(lengths, reverse=True)
    indices, outputs = [], []
    for b in batches:
        batch = collate([examples[i] for i in b])
        indices += batch.indices.tolist()
        outputs += [f"translation of {i}" for i in batch.indices.tolist()]
    assert restore_order(indices, outputs) == [f"translation of {i}" for i in range(57)]
    with pytest.raises(ValueError, match="permutation"):
        restore_order([0, 0], ["a", "b"])


def test_with_a_tokenizer_and_a_dataloader(tmp_path):
    from attnkit.apps.translation.data.generated import generate_corpus
    from attnkit.apps.translation.data.tokenise import train_tokenizer

    corpus = generate_corpus(300, 10, 10, seed=0)
    tok = train_tokenizer(corpus, tmp_path, vocab_size=200)
    train = encode_pairs(tok, corpus.train)
    loader = torch.utils.data.DataLoader(
        train, batch_sampler=TokenBatchSampler(train, 1500), collate_fn=collate
    )
    seen = torch.cat([b.indices for b in loader]).sort().values
    assert torch.equal(seen, torch.arange(300))
    batch = collate(encode_sources(tok, [p.src for p in corpus.test]))
    assert tok.decode_src(batch.src.tolist()) == [p.src for p in corpus.test]
