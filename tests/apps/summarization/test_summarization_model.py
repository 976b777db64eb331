"""The pointer-generator (See et al. 2017) against its definitions: teacher forcing equals
stepping, the output is a distribution over the extended vocabulary, coverage is the running
sum of past attention, ``p_gen = 1`` is the plain decoder, unknown source words are copied by
their extended ids, and the losses ignore padding."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnkit.apps.summarization.model import PointerGenerator, PointerGeneratorConfig

V = 12  # vocabulary: ids 0-3 specials, 4-11 words; ids >= 12 are a source's unknown words
SRC = torch.tensor([[4, 12, 5, 12, 13, 6], [7, 8, 14, 0, 0, 0]])  # (2, 6), 0 = padding
MASK = SRC != 0
TGT = torch.tensor([[2, 12, 5, 13], [2, 14, 9, 0]])  # BOS first; copies 12, 13, 14


def _model(copy=True, coverage=True) -> PointerGenerator:
    torch.manual_seed(0)
    cfg = PointerGeneratorConfig(embed_dim=6, hidden_dim=5, copy=copy, coverage=coverage)
    model = PointerGenerator(cfg, V).double().eval()
    if coverage:
        torch.nn.init.normal_(model.attention.w_c.weight)  # a real coverage term
    return model


MODELS = [
    pytest.param(dict(copy=True, coverage=True), id="pointer+coverage"),
    pytest.param(dict(copy=True, coverage=False), id="pointer"),
    pytest.param(dict(copy=False, coverage=False), id="seq2seq"),
]


@pytest.mark.parametrize("kind", MODELS)
def test_teacher_forcing_equals_step_by_step_decoding(kind):
    model = _model(**kind)
    out = model(SRC, MASK, TGT)  # (B, T, width)
    memory = model.encode(SRC, MASK)
    state = model.init_state(memory)
    for t in range(TGT.size(1)):
        step = model.decode_step(memory, state, TGT[:, t])
        torch.testing.assert_close(step.logits, out.logits[:, t])
        torch.testing.assert_close(step.attention["cross"][:, 0], out.attention["cross"][:, 0, t])
        state = step.state


@pytest.mark.parametrize("kind", MODELS)
def test_the_output_is_a_distribution_over_the_extended_vocabulary(kind):
    model = _model(**kind)
    logp = model(SRC, MASK, TGT).logits  # (B, T, width)
    width = V + SRC.size(1) if kind["copy"] else V
    assert logp.shape == (2, 4, width)
    torch.testing.assert_close(logp.exp().sum(-1), torch.ones(2, 4, dtype=logp.dtype))


def test_coverage_is_the_running_sum_of_past_attention_and_padding_gets_none():
    out = _model()(SRC, MASK, TGT)
    weights = out.attention["cross"][:, 0]  # (B, T, S)
    coverage = out.attention["coverage"][:, 0]  # (B, T, S): before each step's own weights
    past = torch.cumsum(weights, 1) - weights  # sum over t' < t
    torch.testing.assert_close(coverage, past)
    assert (weights[~MASK.unsqueeze(1).expand_as(weights)] == 0).all()


def test_p_gen_one_is_the_plain_decoder():
    model = _model()
    with torch.no_grad():
        model.gate.b_ptr.fill_(1e4)  # p_gen = sigmoid(huge) = 1
    out = model(SRC, MASK, TGT)
    assert torch.allclose(out.attention["p_gen"], torch.ones(2, 4, dtype=torch.double))
    memory = model.encode(SRC, MASK)
    state, plain = model.init_state(memory), []
    for t in range(TGT.size(1)):
        step = model.advance(memory, state, TGT[:, t])
        s = step.state
        logits = model.out(model.hidden_out(torch.cat([s.h, s.context], -1)))  # eq. (4)
        plain.append(F.log_softmax(logits, -1))
        state = s
    plain = torch.stack(plain, 1)  # (B, T, V)
    torch.testing.assert_close(out.logits[..., :V], plain, atol=1e-9, rtol=1e-6)
    assert (out.logits[..., V:] < -20).all()  # no mass on the unknown words


def test_p_gen_zero_copies_unknown_source_words_by_their_extended_ids():
    model = _model()
    with torch.no_grad():
        model.gate.b_ptr.fill_(-1e4)  # p_gen = 0: the attention is the distribution
    out = model(SRC, MASK, TGT)
    weights = out.attention["cross"][0, 0, 0]  # (S,) first paper, first step
    probs = out.logits[0, 0].exp()  # (width,)
    torch.testing.assert_close(probs[12], weights[1] + weights[3])  # the repeated unknown word
    torch.testing.assert_close(probs[13], weights[4])
    assert float(probs[V + 2 :].sum().detach()) < 1e-9  # ids no source word has


def test_unknown_words_are_embedded_as_unk_on_both_sides():
    model = _model()
    torch.testing.assert_close(
        model.words(torch.tensor([12, 99])), model.words(torch.tensor([1, 1]))
    )


@pytest.mark.parametrize("kind", MODELS)
def test_the_losses_ignore_padding_and_coverage_loss_is_eq_12(kind):
    model = _model(**kind)
    out = model(SRC, MASK, TGT)
    tgt_out = torch.tensor([[12, 5, 13, 3], [14, 9, 3, 0]])
    if not kind["copy"]:
        tgt_out = tgt_out.masked_fill(tgt_out >= V, 1)  # <unk>: no copying
    nll, cover = model.losses(out, tgt_out)
    real = tgt_out != 0
    by_hand = -out.logits.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)[real].sum()
    torch.testing.assert_close(nll, by_hand)
    a, c = out.attention["cross"][:, 0], out.attention["coverage"][:, 0]
    expected = torch.minimum(a, c).sum(-1)[real].sum() if kind["coverage"] else 0.0 * nll
    torch.testing.assert_close(cover, expected)
