"""The LAS model (Chan et al. 2016) against its own definitions: teacher forcing equals
step-by-step decoding for both attentions, location-aware attention reads the previous
weights and content-only does not, beam 1 equals greedy, the CTC head is a distribution that
torch's CTC loss takes, and a tiny joint model fits two utterances."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnkit.apps.speech.model import SpeechModel, SpeechModelConfig, joint_loss
from attnkit.decoding.beam import beam_search
from attnkit.decoding.greedy import greedy_decode

PAD, BOS, EOS, V = 0, 1, 2, 9
SMALL = dict(
    n_features=6,
    d_listener=5,
    pyramid=2,
    d_embed=4,
    d_decoder=7,
    d_attention=6,
    conv_channels=3,
    conv_width=5,
    dropout=0.0,
)
ATTENTIONS = [dict(attention="location"), dict(attention="content", decoder_layers=2)]


def _model(**kw) -> SpeechModel:
    torch.manual_seed(0)
    return SpeechModel(SpeechModelConfig(**{**SMALL, **kw}), vocab=V).double().eval()


def _batch(model: SpeechModel, lengths=(41, 22)):
    torch.manual_seed(1)
    lengths = torch.tensor(lengths)
    src = torch.randn(len(lengths), 44, 6, dtype=torch.float64)  # padded past the longest
    return src, model.source_mask(lengths, src.size(1))  # (B, 44, F), (B, 11)


@pytest.mark.parametrize("kw", ATTENTIONS)
def test_teacher_forcing_equals_step_by_step(kw):
    model = _model(**kw)
    src, mask = _batch(model)
    tgt = torch.tensor([[BOS, 5, 6, 7, 5], [BOS, 4, 8, PAD, PAD]])
    forced = model(src, mask, tgt, need_weights=True)
    assert forced.logits.shape == (2, 5, V) and forced.attention["cross"].shape == (2, 1, 5, 11)
    memory = model.encode(src, mask)
    state = model.init_state(memory)
    for t in range(tgt.size(1)):
        step = model.decode_step(memory, state, tgt[:, t], need_weights=True)
        torch.testing.assert_close(step.logits, forced.logits[:, t], rtol=0, atol=1e-12)
        weights = forced.attention["cross"][:, :, t]  # (B, 1, T')
        torch.testing.assert_close(step.attention["cross"], weights, rtol=0, atol=1e-12)
        state = step.state
    w = forced.attention["cross"]
    assert torch.all(w[~mask[:, None, None, :].expand_as(w)] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 1, 5, dtype=torch.float64))


@pytest.mark.parametrize("kw", ATTENTIONS)
def test_an_utterance_decodes_alike_alone_and_in_a_padded_batch(kw):
    model = _model(**kw)
    src, mask = _batch(model)
    tgt = torch.tensor([[BOS, 5, 6], [BOS, 4, 8]])
    batched = model(src, mask, tgt, need_weights=True)
    alone = model(src[1:, :24], mask[1:, :6], tgt[1:], need_weights=True)
    torch.testing.assert_close(batched.logits[1], alone.logits[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(batched.attention["cross"][1, ..., :6], alone.attention["cross"][0])


@pytest.mark.parametrize(("attention", "reads_previous"), [("location", True), ("content", False)])
def test_only_location_aware_attention_reads_the_previous_weights(attention, reads_previous):
    """Chorowski et al. 2015, eq. (8): f_i = F * alpha_{i-1} enters the score."""
    model = _model(attention=attention)
    src, mask = _batch(model)
    memory = model.encode(src, mask)
    state = model.init_state(memory)
    moved = state.weights.roll(3, -1) * mask  # alpha_0 moved, padding still 0
    prev = torch.tensor([BOS, BOS])
    a = model.decode_step(memory, state, prev).logits
    b = model.decode_step(memory, type(state)(state.h, state.c, state.context, moved), prev)
    assert (not torch.allclose(a, b.logits)) == reads_previous


@pytest.mark.parametrize("kw", ATTENTIONS)
def test_beam_one_is_greedy_with_attention_over_each_utterance(kw):
    model = _model(**kw)
    src, mask = _batch(model)
    opts = dict(bos_id=BOS, eos_id=EOS, max_len=8, max_len_ratio=0.0, max_len_offset=8)
    greedy = greedy_decode(model, src, mask, need_weights=True, **opts)
    beams = beam_search(model, src, mask, beam_size=1, length_penalty=0.0, **opts)
    for g, (b,) in zip(greedy, beams, strict=True):
        assert g.tokens == b.tokens and g.score == pytest.approx(b.score, abs=1e-9)
    for g, real in zip(greedy, mask.sum(1).tolist(), strict=True):
        assert g.attention["cross"].shape == (1, g.length, real)


def test_ctc_head_gives_distributions_that_ctc_loss_takes():
    model = _model(ctc_weight=0.3)
    src, mask = _batch(model)
    log_probs, lengths = model.ctc_log_probs(model.encode(src, mask))
    assert log_probs.shape == (2, 11, V) and lengths.tolist() == [10, 5] and model.blank == PAD
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(2, 11, dtype=torch.float64))
    targets = torch.tensor([[5, 6, 6, 7], [4, 8, 0, 0]])
    loss = F.ctc_loss(log_probs.transpose(0, 1), targets, lengths, torch.tensor([4, 2]))
    assert torch.isfinite(loss) and loss > 0


def test_the_weight_decides_which_parts_exist_and_the_loss_mix():
    assert _model().ctc is None
    ctc_only = _model(ctc_weight=1.0)
    src, mask = _batch(ctc_only)
    with pytest.raises(ValueError, match="no speller"):
        ctc_only.init_state(ctc_only.encode(src, mask))
    with pytest.raises(ValueError, match="no CTC head"):
        _model().ctc_log_probs(_model().encode(src, mask))
    with pytest.raises(ValueError, match="model.source_mask"):
        _model().encode(src, mask[:, :10])
    with pytest.raises(ValueError, match="conv_width must be odd"):
        SpeechModelConfig(conv_width=4)
    ctc, att = torch.tensor(2.0), torch.tensor(4.0)
    assert joint_loss(ctc, att, 0.25) == 0.25 * 2 + 0.75 * 4
    assert joint_loss(None, att, 0.0) is att and joint_loss(ctc, None, 1.0) is ctc


def test_a_tiny_joint_model_fits_two_utterances():
    """40 Adam steps on two made-up utterances: both losses fall (about 2 s on one core)."""
    torch.manual_seed(0)
    model = SpeechModel(SpeechModelConfig(**{**SMALL, "ctc_weight": 0.5}), vocab=V)
    lengths = torch.tensor([32, 24])
    src, mask = torch.randn(2, 32, 6), model.source_mask(lengths, 32)
    labels = torch.tensor([[5, 6, 6, 7], [4, 8, 3, 0]])  # PAD-filled
    tgt_in = torch.cat([torch.full((2, 1), BOS), labels], 1)  # (B, 5)
    tgt_out = torch.cat([labels, torch.zeros(2, 1, dtype=torch.long)], 1)  # (B, 5)
    tgt_out[torch.arange(2), torch.tensor([4, 3])] = EOS
    optimiser = torch.optim.Adam(model.parameters(), lr=0.03)
    history = []
    for _ in range(40):
        memory = model.encode(src, mask)
        log_probs, frames = model.ctc_log_probs(memory)
        ctc = F.ctc_loss(log_probs.transpose(0, 1), labels, frames, torch.tensor([4, 3]))
        logits, _ = model.speller.teacher_forced(memory, tgt_in)
        att = F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD)
        optimiser.zero_grad()
        joint_loss(ctc, att, 0.5).backward()
        optimiser.step()
        history.append((ctc.item(), att.item()))
    (ctc0, att0), (ctc1, att1) = history[0], history[-1]
    assert ctc1 < 0.5 * ctc0 and att1 < 0.2 * att0, history[::10]
