"""The decoding caches of :mod:`attnkit.attention.cache`: a self-attention cache written in
place into a buffer equals concatenation (through growth, branching, row selection, autograd
and mixed dtypes), and a static cache of one row per group of query rows (a sentence's beams)
gives what the same cache repeated per row gives, weights and masks of every shape included."""

from __future__ import annotations

import pytest
import torch

from attnkit.attention import KVCache, MultiHeadAttention, key_padding_mask
from attnkit.attention.cache import MIN_CAPACITY, group_rows, ungroup_rows

B, H, DH = 3, 2, 4


def empty() -> KVCache:
    return KVCache(torch.zeros(B, H, 0, DH), torch.zeros(B, H, 0, DH))


def random_kv(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(B, H, n, DH, generator=gen), torch.randn(B, H, n, DH, generator=gen)


def test_append_writes_in_place_and_equals_concatenation_through_growth():
    cache, keys, values, buffers = empty(), [], [], []
    for t in range(2 * MIN_CAPACITY + 5):  # 103 positions: buffers of 32, 64 and 128
        k, v = random_kv(1 + t % 2, seed=t)  # one or two positions at a time
        cache = cache.append(k, v)
        keys.append(k)
        values.append(v)
        buffers.append(None if cache._buffer is None else cache._buffer.key.data_ptr())
        assert torch.equal(cache.key, torch.cat(keys, 2))
        assert torch.equal(cache.value, torch.cat(values, 2))
        assert len(cache) == cache.key.size(2)
    assert buffers[0] is None  # a new cache is concatenated; appended to again, it moves
    assert len(set(buffers[1:])) == 3  # one buffer per capacity, not one per step


def test_a_second_continuation_does_not_overwrite_the_first():
    base = empty().append(*random_kv(2, seed=1)).append(*random_kv(1, seed=5))
    first = base.append(*random_kv(1, seed=2))
    assert first._buffer is base._buffer  # in place
    kept = first.key.clone()
    second = base.append(*random_kv(1, seed=3))  # base is no longer the buffer's end: a copy
    assert second._buffer is not base._buffer
    assert torch.equal(first.key, kept)
    assert not torch.equal(first.key, second.key)
    assert torch.equal(second.key[:, :, :3], base.key)
    third = first.append(*random_kv(1, seed=4))  # first still ends its buffer: in place
    assert third._buffer is first._buffer and torch.equal(third.key[:, :, :4], kept)


def test_select_rows_copies_the_filled_part_and_appends_go_on():
    cache = empty().append(*random_kv(4, seed=1)).append(*random_kv(1, seed=4))
    assert cache._buffer is not None
    reference = (cache.key.clone(), cache.value.clone())
    index = torch.tensor([2, 2, 0])
    chosen = cache.select_rows(index)  # the 5 filled positions, contiguous
    assert chosen.key.is_contiguous() and chosen._buffer is None
    assert torch.equal(chosen.key, reference[0][index])
    assert torch.equal(chosen.value, reference[1][index])
    k, v = random_kv(1, seed=2)
    longer = chosen.append(k, v)  # reordered, then appended: concatenated (beam search)
    assert longer._buffer is None and longer.key.is_contiguous()
    assert torch.equal(longer.key, torch.cat([reference[0][index], k], 2))
    assert longer.append(k, v)._buffer is not None  # appended twice in a row: a buffer
    assert torch.equal(cache.key, reference[0])  # the original is untouched
    plain = KVCache(*random_kv(2, seed=3)).select_rows(index)
    assert torch.equal(plain.key, random_kv(2, seed=3)[0][index])


def test_append_under_autograd_concatenates_and_gradients_flow():
    k, v = random_kv(2, seed=1)
    k.requires_grad_(True)
    cache = empty().append(k, v).append(*random_kv(1, seed=2))
    assert cache._buffer is None
    cache.key.sum().backward()
    assert torch.equal(k.grad, torch.ones_like(k))


def test_append_promotes_dtypes_as_concatenation_does():
    k, v = random_kv(1, seed=1)
    cache = empty().append(k.bfloat16(), v.bfloat16())
    expected = torch.cat([empty().key, k.bfloat16()], 2)
    assert cache.key.dtype == expected.dtype == torch.float32
    assert torch.equal(cache.key, expected)


def test_group_rows_round_trip_and_layout():
    x = torch.arange(6 * 2 * 3 * 4).view(6, 2, 3, 4)  # (B * G, H, Tq, Dh), B = 2, G = 3
    grouped = group_rows(x, 3)  # (2, 2, 9, 4)
    assert grouped.shape == (2, 2, 9, 4)
    assert torch.equal(grouped[1, :, 2 * 3 + 1], x[1 * 3 + 2, :, 1])  # row g's query t
    assert torch.equal(ungroup_rows(grouped, 3), x)


MASKS = ["none", "per-row", "per-sentence", "per-row-query", "shared-query"]


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("tq", [1, 2])
def test_a_static_cache_per_sentence_serves_its_beams(mask_kind, need_weights, tq):
    """A cross-attention cache of B rows for B * G query rows equals the cache repeated G
    times (beam search's memory per beam)."""
    torch.manual_seed(0)
    b, g, s, d = 3, 4, 5, 8
    mha = MultiHeadAttention(d, 2).eval()
    memory = torch.randn(b, s, d)
    real = torch.arange(s)[None, :] < torch.tensor([5, 2, 4])[:, None]  # (B, S)
    query = torch.randn(b * g, tq, d)  # (B * G, Tq, D)
    masks = {
        "none": (None, None),
        "per-row": (key_padding_mask(real.repeat_interleave(g, 0)),) * 2,  # (B*G, 1, 1, S)
        "per-sentence": (key_padding_mask(real), None),  # (B, 1, 1, S)
        "per-row-query": (torch.rand(b * g, 1, tq, s) > 0.3,) * 2,
        "shared-query": (torch.rand(tq, s) > 0.3,) * 2,
    }
    mask, repeated_mask = masks[mask_kind]
    if mask_kind == "per-sentence":
        repeated_mask = key_padding_mask(real.repeat_interleave(g, 0))
    shared = mha.project_kv(memory, memory)  # (B, H, S, Dh)
    repeated = mha.project_kv(*(memory.repeat_interleave(g, 0),) * 2)  # (B * G, H, S, Dh)
    with torch.no_grad():
        ours = mha(query, mask=mask, need_weights=need_weights, cache=shared, static_kv=True)
        ref = mha(
            query, mask=repeated_mask, need_weights=need_weights, cache=repeated, static_kv=True
        )
    torch.testing.assert_close(ours.context, ref.context, atol=1e-6, rtol=1e-5)
    if need_weights:
        assert ours.weights.shape == (b * g, 2, tq, s)
        torch.testing.assert_close(ours.weights, ref.weights, atol=1e-6, rtol=1e-5)


def test_a_static_cache_that_does_not_divide_the_rows_is_refused():
    mha = MultiHeadAttention(8, 2).eval()
    cache = mha.project_kv(*(torch.randn(3, 5, 8),) * 2)
    with pytest.raises(ValueError, match="cannot serve 7 query rows"):
        mha(torch.randn(7, 1, 8), cache=cache, static_kv=True)
