"""Beam search with the Transformer's cross-attention keys/values kept once per sentence
(``shared_by_beams``), not repeated and reordered per beam: the hypotheses, scores and
attention equal those of the same search over the same model recomputed from the whole prefix
at every step (no cache at all), for sentences of many lengths that stop at different steps,
and the shared cache is selected only when sentences leave the batch."""

from __future__ import annotations

import pytest
import torch
from decoding_helpers import BOS, EOS, V, make_model
from torch import Tensor

from attnkit.decoding import beam_search
from attnkit.modules.seq2seq import Memory, Seq2SeqModel, StepOutput

LENGTHS = (7, 1, 9, 3, 6, 2, 8, 4)  # real source lengths, padded to 9
ATOL = 1e-9  # float64 models


class Recomputed(Seq2SeqModel):
    """``inner`` run by teacher forcing over the whole prefix at every step: the state is the
    inputs fed so far ``(B, t)``, so nothing is cached and only tokens are reordered."""

    def __init__(self, inner: Seq2SeqModel) -> None:
        super().__init__()
        self.inner = inner

    def encode(self, src: Tensor, src_mask: Tensor) -> Memory:
        return Memory(src.unsqueeze(-1), src_mask)  # (B, S, 1): the source ids themselves

    def init_state(self, memory: Memory) -> Tensor:
        return memory.mask.new_zeros(memory.mask.size(0), 0, dtype=torch.long)  # (B, 0)

    def decode_step(self, memory, state, prev, need_weights=False) -> StepOutput:
        prefix = torch.cat([state, prev.unsqueeze(1)], 1)  # (B, t + 1): BOS .. prev
        src = memory.states.squeeze(-1)  # (B, S, 1) -> (B, S)
        out = self.inner(src, memory.mask, prefix, need_weights=need_weights)
        attention = {
            name: weights[:, :, -1]  # (B, H, t + 1, Tk) -> (B, H, Tk): this step's query
            for name, weights in out.attention.items()
            if not name.startswith("encoder")
        }
        return StepOutput(out.logits[:, -1], prefix, attention)


def varied_batch(seed: int = 3) -> tuple[Tensor, Tensor]:
    """``src (8, 9)`` of the :data:`LENGTHS`, padded at the end, and its mask."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(3, V, (len(LENGTHS), max(LENGTHS)), generator=gen)  # (B, S)
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]  # (B, S)
    return src.masked_fill(~mask, 0), mask


@pytest.mark.parametrize("beam_size", [1, 3, 5])
@pytest.mark.parametrize("seed", [0, 1])
def test_cached_beam_search_equals_recomputed(beam_size, seed):
    model, (src, mask) = make_model("transformer", seed=seed), varied_batch(seed)
    kw = dict(bos_id=BOS, eos_id=EOS, beam_size=beam_size, n_best=beam_size, need_weights=True)
    cached = beam_search(model, src, mask, **kw)
    recomputed = beam_search(Recomputed(model), src, mask, **kw)
    best_lengths = {hyps[0].length for hyps in cached}
    assert len(best_lengths) >= 3, best_lengths  # sentences stop at different steps
    for ours, reference in zip(cached, recomputed, strict=True):
        assert len(ours) == len(reference) == beam_size
        for a, b in zip(ours, reference, strict=True):
            assert (a.tokens, a.finished) == (b.tokens, b.finished)
            assert a.score == pytest.approx(b.score, abs=ATOL)
            assert a.attention.keys() == b.attention.keys()
            for name, weights in a.attention.items():
                torch.testing.assert_close(weights, b.attention[name], atol=ATOL, rtol=0)


def test_cross_attention_cache_is_selected_only_when_sentences_stop():
    """One row per active sentence at every step, the very same tensor from step to step
    until a sentence stops; the beams' self-attention caches have one row per beam."""
    model, (src, mask) = make_model("transformer"), varied_batch()
    k, seen = 3, []
    step = model.decode_step

    def spy(memory, state, prev, need_weights=False):
        layer = state.layers[0]
        seen.append((prev.size(0), layer.cross_attn.key, layer.self_attn.key.size(0)))
        return step(memory, state, prev, need_weights)

    model.decode_step = spy
    beam_search(model, src, mask, beam_size=k, bos_id=BOS, eos_id=EOS)
    assert len(seen) > 3
    for rows, cross, self_rows in seen:
        assert cross.size(0) * k == rows == self_rows
    pairs = list(zip(seen[:-1], seen[1:], strict=True))  # consecutive steps
    kept = [a is b for (_, a, _), (_, b, _) in pairs]
    stopped = [r0 != r1 for (r0, _, _), (r1, _, _) in pairs]
    assert kept == [not s for s in stopped] and any(stopped) and any(kept)
