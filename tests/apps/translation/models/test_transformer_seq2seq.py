"""TransformerSeq2Seq: KV-cache decoding equals teacher forcing, padding invariance,
reorder_state, tied/shared embeddings, and a tiny model learning to reverse."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnkit.apps.translation.models.transformer import TransformerSeq2Seq, TransformerState
from attnkit.modules.seq2seq import reorder_state, repeat_memory

PAD, BOS, EOS = 0, 1, 2
SRC_V, TGT_V, D, H, L = 11, 13, 32, 4, 2
SRC_LENGTHS = [6, 4, 2]  # B = 3 with source padding in the last two rows
ATOL = 1e-5


def make_model(norm_first=False, positional="sinusoidal", **kwargs) -> TransformerSeq2Seq:
    torch.manual_seed(0)
    model = TransformerSeq2Seq(
        SRC_V,
        TGT_V,
        d_model=D,
        num_heads=H,
        d_ff=64,
        encoder_layers=L,
        decoder_layers=L,
        norm_first=norm_first,
        positional=positional,
        max_len=32,
        **kwargs,
    )
    return model.eval()


def batch(seed=1, extra_pad=0):
    g = torch.Generator().manual_seed(seed)
    s = max(SRC_LENGTHS) + extra_pad
    src = torch.randint(3, SRC_V, (len(SRC_LENGTHS), s), generator=g)  # (B, S)
    keep = torch.arange(s) < torch.tensor(SRC_LENGTHS)[:, None]  # (B, S)
    src = src.masked_fill(~keep, PAD)
    tgt = torch.randint(3, TGT_V, (len(SRC_LENGTHS), 5), generator=g)  # (B, T)
    tgt[:, 0] = BOS
    return src, keep, tgt


def decode_all(model, src, keep, tgt, need_weights):
    """Feed ``tgt`` one token at a time; stacked logits ``(B, T, V)`` and per-step outputs."""
    memory = model.encode(src, keep)
    state = model.init_state(memory)
    steps = []
    for t in range(tgt.size(1)):
        out = model.decode_step(memory, state, tgt[:, t], need_weights)
        state = out.state
        steps.append(out)
    return torch.stack([s.logits for s in steps], 1), steps, state


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "readable"])
def test_cached_steps_equal_teacher_forcing(norm_first, positional, need_weights):
    model = make_model(norm_first, positional)
    src, keep, tgt = batch()
    with torch.no_grad():
        full = model(src, keep, tgt, need_weights=True)
        fused = model(src, keep, tgt)
        stepped, steps, state = decode_all(model, src, keep, tgt, need_weights)
    assert (stepped - full.logits).abs().max() < ATOL
    assert (fused.logits - full.logits).abs().max() < ATOL
    assert fused.attention == {}
    assert state.step.tolist() == [tgt.size(1)] * len(SRC_LENGTHS)
    if not need_weights:
        assert all(s.attention == {} for s in steps)
        return
    t_len, s_len = tgt.size(1), src.size(1)
    decoder_names = sorted(f"layer{l}.{k}" for l in range(L) for k in ("self", "cross"))
    encoder_names = [name for name in full.attention if name.startswith("encoder.")]
    assert sorted(set(full.attention) - set(encoder_names)) == decoder_names
    for t, step in enumerate(steps):
        assert sorted(step.attention) == decoder_names  # steps carry the decoder's attention
        for l in range(L):
            self_w = step.attention[f"layer{l}.self"]  # (B, H, t + 1)
            cross_w = step.attention[f"layer{l}.cross"]  # (B, H, S)
            assert self_w.shape == (len(SRC_LENGTHS), H, t + 1)
            assert cross_w.shape == (len(SRC_LENGTHS), H, s_len)
            assert (self_w - full.attention[f"layer{l}.self"][:, :, t, : t + 1]).abs().max() < ATOL
            assert (cross_w - full.attention[f"layer{l}.cross"][:, :, t]).abs().max() < ATOL
    assert full.attention["layer0.self"].shape == (len(SRC_LENGTHS), H, t_len, t_len)
    assert (full.attention["layer0.cross"].masked_select(~keep[:, None, None, :]) == 0).all()


def test_init_state_projects_memory_once_per_layer():
    model = make_model()
    src, keep, tgt = batch()
    with torch.no_grad():
        memory = model.encode(src, keep)
        state = model.init_state(memory)
        b, s = src.shape
        for layer, cache in zip(model.decoder.layers, state.layers, strict=True):
            key = layer.multihead_attn.k_proj(memory.states)  # (B, S, D)
            assert torch.equal(cache.cross_attn.key, key.view(b, s, H, D // H).transpose(1, 2))
            assert cache.self_attn.key.shape == (b, H, 0, D // H)
        out = model.decode_step(memory, state, tgt[:, 0])
    for before, after in zip(state.layers, out.state.layers, strict=True):
        assert after.cross_attn.key is before.cross_attn.key  # reused, not re-projected
        assert len(after.self_attn) == 1


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_source_padding_changes_nothing(norm_first):
    model = make_model(norm_first)
    src, keep, tgt = batch()
    padded_src, padded_keep, _ = batch(extra_pad=3)
    padded_src[:, : src.size(1)] = src  # same tokens, three more (masked) pad positions
    padded_src[:, src.size(1) :] = torch.randint(3, SRC_V, (len(SRC_LENGTHS), 3))  # any ids
    with torch.no_grad():
        a = model(src, keep, tgt).logits
        b = model(padded_src, padded_keep, tgt).logits
        c, _, _ = decode_all(model, padded_src, padded_keep, tgt, need_weights=False)
    assert (a - b).abs().max() < ATOL
    assert (a - c).abs().max() < ATOL


def test_reorder_state_follows_the_batch():
    model = make_model()
    src, keep, tgt = batch()
    perm = torch.tensor([2, 0, 1])
    with torch.no_grad():
        reference, _, _ = decode_all(model, src, keep, tgt, need_weights=False)
        memory = model.encode(src, keep)
        state = model.init_state(memory)
        logits = []
        for t in range(tgt.size(1)):
            if t == 2:  # reorder mid-way, as beam search does
                state = reorder_state(state, perm)
                memory = reorder_state(memory, perm)
            prev = tgt[:, t] if t < 2 else tgt[perm, t]
            out = model.decode_step(memory, state, prev)
            state = out.state
            logits.append(out.logits)
    assert isinstance(state, TransformerState)
    assert (torch.stack(logits[:2], 1) - reference[:, :2]).abs().max() < ATOL
    assert (torch.stack(logits[2:], 1) - reference[perm, 2:]).abs().max() < ATOL


def test_repeated_memory_decodes_like_the_original():
    model = make_model()
    src, keep, tgt = batch()
    with torch.no_grad():
        memory = repeat_memory(model.encode(src, keep), 2)  # (2B, S, D): beam size 2
        state = model.init_state(memory)
        out = model.decode_step(memory, state, tgt[:, 0].repeat_interleave(2))
        single = model(src, keep, tgt[:, :1]).logits[:, 0]  # (B, V)
    assert (out.logits - single.repeat_interleave(2, 0)).abs().max() < ATOL


def test_tied_and_shared_embeddings():
    tied = make_model(tie_embeddings=True)
    assert tied.output.weight is tied.tgt_embed.token.weight
    assert tied.output.weight is not tied.src_embed.token.weight
    joint = {"d_model": D, "num_heads": H, "d_ff": 64, "encoder_layers": 1, "decoder_layers": 1}
    shared = TransformerSeq2Seq(9, 9, share_embeddings=True, tie_embeddings=True, **joint)
    assert shared.src_embed.token.weight is shared.tgt_embed.token.weight
    assert shared.output.weight is shared.src_embed.token.weight
    n_unique = len({id(p) for p in shared.parameters()})
    assert n_unique == len(list(shared.parameters()))  # parameters() lists a shared one once
    with pytest.raises(ValueError, match="joint vocabulary"):
        TransformerSeq2Seq(9, 10, share_embeddings=True)


def test_pre_ln_has_final_norms_and_post_ln_does_not():
    assert make_model(norm_first=True).encoder.norm is not None
    assert make_model(norm_first=True).decoder.norm is not None
    assert make_model().encoder.norm is None and make_model().decoder.norm is None


def reverse_batch(n: int, g: torch.Generator, vocab: int):
    """Source: 3-6 random symbols; target: BOS, the symbols reversed, EOS."""
    lengths = torch.randint(3, 7, (n,), generator=g)
    s = int(lengths.max())
    src = torch.zeros(n, s, dtype=torch.long)
    tgt = torch.zeros(n, s + 2, dtype=torch.long)
    for i, length in enumerate(lengths.tolist()):
        symbols = torch.randint(3, vocab, (length,), generator=g)
        src[i, :length] = symbols
        tgt[i, 0], tgt[i, 1 : length + 1], tgt[i, length + 1] = BOS, symbols.flip(0), EOS
    return src, src != PAD, tgt[:, :-1], tgt[:, 1:]  # src, keep, tgt_in, tgt_out


@pytest.fixture
def one_thread():
    """Tiny matrices gain nothing from threads, and under CPU contention OpenMP spin-waiting
    made this test 20-40x slower with 2 threads (measured: 2-4 s vs 40-86 s)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_tiny_model_learns_to_reverse(norm_first, one_thread):
    vocab = 12
    torch.manual_seed(0)
    model = TransformerSeq2Seq(
        vocab,
        vocab,
        d_model=32,
        num_heads=2,
        d_ff=64,
        encoder_layers=1,
        decoder_layers=1,
        dropout=0.0,
        norm_first=norm_first,
        tie_embeddings=True,
    )
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    # the rate decays linearly to 0: with a constant rate the last batches' loss jumped between
    # 0.01 and 0.16 from machine to machine (and unseen-sentence accuracy with it)
    decay = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1 - step / 600)
    losses = []
    for _ in range(600):
        src, keep, tgt_in, tgt_out = reverse_batch(64, g, vocab)
        logits = model(src, keep, tgt_in).logits  # (B, T, V), fused attention
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt_out.reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()
        decay.step()
        losses.append(loss.item())
    assert sum(losses[-20:]) / 20 < 0.15  # the last 20 batches, not one noisy batch
    model.eval()
    src, keep, tgt_in, tgt_out = reverse_batch(32, g, vocab)  # unseen sentences
    with torch.no_grad():  # greedy decoding, one cached step at a time
        memory = model.encode(src, keep)
        state, prev, predicted = model.init_state(memory), tgt_in[:, 0], []
        for _ in range(tgt_out.size(1)):
            out = model.decode_step(memory, state, prev)
            state, prev = out.state, out.logits.argmax(-1)
            predicted.append(prev)
    predicted = torch.stack(predicted, 1)  # (B, T)
    real = tgt_out != PAD
    assert (predicted == tgt_out)[real].float().mean() > 0.95


def test_forward_returns_encoder_self_attention():
    import torch

    from attnkit.apps.translation.models.transformer import TransformerSeq2Seq

    torch.manual_seed(0)
    model = TransformerSeq2Seq(
        20, 22, d_model=16, num_heads=2, d_ff=32, encoder_layers=2, decoder_layers=1, dropout=0.0
    ).eval()
    src = torch.randint(4, 20, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 5:] = False
    out = model(src, mask, torch.randint(4, 22, (2, 4)), need_weights=True)
    assert set(out.attention) == {"encoder.layer0", "encoder.layer1", "layer0.self", "layer0.cross"}
    enc = out.attention["encoder.layer1"]
    assert enc.shape == (2, 2, 7, 7)
    torch.testing.assert_close(enc.sum(-1), torch.ones(2, 2, 7))
    assert torch.all(enc[1, :, :, 5:] == 0)  # padding keys get nothing
    fast = model(src, mask, torch.randint(4, 22, (2, 4)))
    assert fast.attention == {}


@pytest.mark.parametrize("positions", ["shaw", "t5", "alibi", "rope", "none"])
@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "readable"])
def test_cached_steps_equal_teacher_forcing_with_each_position_scheme(positions, need_weights):
    """The KV cache with a relative scheme: each step's query sits at the cache's length, so
    step-by-step decoding equals recomputing the whole prefix (issue 21)."""
    options = {"relative_values": True} if positions == "shaw" else None
    model = make_model(positions=positions, position_options=options)
    src, keep, tgt = batch()
    with torch.no_grad():
        full = model(src, keep, tgt, need_weights=True)
        stepped, _, _ = decode_all(model, src, keep, tgt, need_weights)
        more_src = F.pad(src, (0, 3), value=PAD)  # (B, S + 3): more source padding
        padded = model(more_src, F.pad(keep, (0, 3), value=False), tgt)  # the same logits
    assert (stepped - full.logits).abs().max() < ATOL
    assert (padded.logits - full.logits).abs().max() < ATOL
    assert model.src_embed.position is None  # no absolute positions in the embeddings


def test_position_schemes_put_their_parameters_where_the_papers_do():
    counts = {}
    for positions in ("absolute", "shaw", "t5", "alibi", "rope", "none"):
        model = make_model(positions=positions)
        counts[positions] = sum(p.numel() for p in model.parameters())
    base = counts["none"]
    assert counts["absolute"] == counts["alibi"] == counts["rope"] == base  # fixed functions
    # Shaw: a (2k + 1) x Dh key table per self-attention (k = 16), 2 + 2 layers
    assert counts["shaw"] - base == (2 * 16 + 1) * (D // H) * 2 * L
    # T5: one (32 buckets x H) table per stack, shared by its layers (Raffel et al. §2.1)
    assert counts["t5"] - base == 32 * H * 2
    t5 = make_model(positions="t5")
    assert t5.encoder.layers[1].self_attn.position is t5.encoder.layers[0].self_attn.position
    assert t5.decoder.layers[0].self_attn.position.bidirectional is False  # causal decoder
    assert t5.encoder.layers[0].self_attn.position.bidirectional is True
    assert all(layer.multihead_attn.position is None for layer in t5.decoder.layers)
