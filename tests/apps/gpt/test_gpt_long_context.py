"""The long-context evaluations of ``benchmarks/gpt_sinks.py`` (Xiao et al. 2023, "Efficient
Streaming Language Models with Attention Sinks"): a rope GPT decoded a token at a time with a
window + sinks cache gives the logits of one forward under the sliding-window-with-sinks mask;
the recompute baseline's loss is a fresh forward's of the last window; the StreamingLLM
emulation (sinks re-rotated next to the window) is, for one layer, a fresh forward of the sinks
followed by the recent tokens."""

import torch
import torch.nn.functional as F
from benchmarks.gpt_sinks import model_window, recompute, stepwise

from attnkit.apps.gpt.config import GPTModelConfig
from attnkit.apps.gpt.model import GPT
from attnkit.attention.masks import sliding_window_mask_at

VOCAB, W, S, N = 19, 8, 2, 30


def _model(layers=2, window=None) -> GPT:
    torch.manual_seed(0)
    cfg = GPTModelConfig(layers=layers, heads=2, width=16, positions="rope", window=window)
    model = GPT(cfg, VOCAB, 16).eval()
    with torch.no_grad():  # scores far from GPT-2's near-zero init, so positions matter
        for block in model.blocks:
            block.attn.q_proj.weight.mul_(20)
            block.attn.k_proj.weight.mul_(20)
    return model


def _ids(rows=2, length=N + 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (rows, length), generator=torch.Generator().manual_seed(3))


@torch.no_grad()
def test_window_and_sinks_cache_equals_one_masked_forward():
    model, ids = _model(window=W), _ids()[:, :N]
    whole = model(ids, sinks=S, need_weights=True)  # (B, N, V), the sliding-window-sinks mask
    caches, steps = None, []
    for t in range(N):
        out = model(ids[:, t : t + 1], caches=caches, use_cache=True, sinks=S)
        steps.append(out.logits[:, 0])
        caches = out.caches
    assert len(caches[0]) == S + W - 1  # the sinks and the last W - 1 positions kept
    torch.testing.assert_close(torch.stack(steps, 1), whole.logits, atol=1e-5, rtol=1e-5)
    allowed = sliding_window_mask_at(torch.arange(N), torch.arange(N), W, S)  # (N, N)
    for w in whole.weights:  # (B, H, N, N): nothing outside the mask, the sinks seen
        assert float(w[..., ~allowed].abs().max()) == 0.0
        assert float(w[:, :, W:, :S].min()) > 0.0


@torch.no_grad()
def test_stepwise_losses_equal_the_masked_forwards():
    model, ids = _model(), _ids()
    losses, _ = stepwise(model, ids, W, S)  # (B, N)
    with model_window(model, W):
        logits = model(ids[:, :-1], sinks=S).logits  # (B, N, V)
    expected = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")  # (B, N)
    torch.testing.assert_close(losses, expected, atol=1e-5, rtol=1e-5)
    assert model.cfg.window is None  # restored


@torch.no_grad()
def test_recompute_equals_a_fresh_forward_of_the_last_window():
    model, ids = _model(), _ids()
    losses = recompute(model, ids, W, chunk=7)  # (B, N)
    x, y = ids[:, :-1], ids[:, 1:]
    for t in range(N):
        logits = model(x[:, max(0, t - W + 1) : t + 1]).logits[:, -1]  # (B, V)
        expected = F.cross_entropy(logits, y[:, t], reduction="none")  # (B,)
        torch.testing.assert_close(losses[:, t], expected, atol=1e-5, rtol=1e-5)


@torch.no_grad()
def test_streaming_positions_equal_a_fresh_forward_of_sinks_and_recent():
    """One layer: keys depend only on their token and position, so StreamingLLM's cache at
    query ``t`` (sinks at ``0 .. S - 1``, the recent ``W - S`` at ``S .. W - 1``) is a fresh
    forward of those tokens."""
    model, ids = _model(layers=1), _ids()
    losses, _ = stepwise(model, ids, W - S, S, streaming=True)  # (B, N)
    x, y = ids[:, :-1], ids[:, 1:]
    for t in range(W, N):
        kept = torch.cat([x[:, :S], x[:, t - (W - S) + 1 : t + 1]], 1)  # (B, W)
        logits = model(kept).logits[:, -1]  # (B, V)
        expected = F.cross_entropy(logits, y[:, t], reduction="none")  # (B,)
        torch.testing.assert_close(losses[:, t], expected, atol=1e-5, rtol=1e-5)
