"""Per-head scores (attnkit.apps.gpt.heads): prefix matching, previous token and sink share on
hand-built weights with exact values; Elhage et al.'s eigenvalue copying score on hand-built
matrices; the OV circuit against the attention module's own forward; and every score on a GPT
whose weights are set by hand to a two-layer induction circuit (a previous-token head and a
sink head in layer 1, an induction head and a uniform head in layer 2)."""

import copy

import pytest
import torch

from attnkit.apps.gpt.config import GPTModelConfig
from attnkit.apps.gpt.heads import (
    eigen_copying,
    head_scores,
    ov_circuit,
    prefix_matching,
    previous_token,
    sink_share,
)
from attnkit.apps.gpt.model import GPT


def _uniform(t: int) -> torch.Tensor:
    return torch.ones(t, t).tril() / torch.arange(1, t + 1)[:, None]  # (T, T) causal


def test_prefix_matching_on_hand_built_weights():
    ids = torch.tensor([[1, 2, 3, 1, 2, 3]])  # half 3: queries 3, 4, 5 target keys 1, 2, 3
    exact, halfway = torch.eye(6), torch.eye(6)
    for t, key in ((3, 1), (4, 2), (5, 3)):
        exact[t] = torch.nn.functional.one_hot(torch.tensor(key), 6).float()
        halfway[t] = 0.0
        halfway[t, key], halfway[t, 0] = 0.5, 0.5
    weights = torch.stack([exact, halfway, _uniform(6)])[None]  # (1, 3, T, T)
    expected = torch.tensor([1.0, 0.5, (1 / 4 + 1 / 5 + 1 / 6) / 3])
    torch.testing.assert_close(prefix_matching(weights, ids), expected)
    late = torch.tensor([False] * 5 + [True])  # only query 5
    torch.testing.assert_close(prefix_matching(weights, ids, late), torch.tensor([1.0, 0.5, 1 / 6]))


def test_prefix_matching_sums_every_earlier_occurrence():
    ids = torch.tensor([[5, 7, 5, 9, 5]])  # query 2: target 1; query 4: targets 1 and 3
    w = torch.zeros(1, 1, 5, 5)
    w[0, 0, :, 0] = 1.0
    w[0, 0, 2] = torch.tensor([0.0, 0.25, 0.75, 0, 0])
    w[0, 0, 4] = torch.tensor([0.0, 0.25, 0.0, 0.5, 0.25])
    torch.testing.assert_close(prefix_matching(w, ids), torch.tensor([(0.25 + 0.75) / 2]))
    with pytest.raises(ValueError, match="no query repeats"):
        prefix_matching(w, torch.tensor([[1, 2, 3, 4, 6]]))


def test_previous_token_and_sink_share_on_hand_built_weights():
    t = 8
    shifted = torch.zeros(t, t)
    shifted[0, 0] = 1.0
    shifted[torch.arange(1, t), torch.arange(t - 1)] = 1.0  # every query on its previous key
    sink = torch.zeros(t, t)
    sink[:, 0] = 1.0
    weights = torch.stack([shifted, sink, _uniform(t)])[None].repeat(2, 1, 1, 1)  # (2, 3, T, T)
    inverse = 1 / torch.arange(1, t + 1)  # uniform: 1 / (t + 1) on each key
    torch.testing.assert_close(
        previous_token(weights), torch.tensor([1.0, 1 / 7, float(inverse[1:].mean())])
    )
    torch.testing.assert_close(
        sink_share(weights), torch.tensor([0.0, 1.0, float(inverse[4:].mean())])
    )
    torch.testing.assert_close(sink_share(weights, skip=0)[0], torch.tensor(2 / 8))  # rows 0, 1
    with pytest.raises(ValueError, match=r"\(B, H, T, T\)"):
        sink_share(weights[0])


@pytest.mark.parametrize(
    "matrix, score",
    [
        (torch.eye(3), 1.0),
        (-torch.eye(3), -1.0),
        (torch.diag(torch.tensor([3.0, -1.0])), 0.5),
        (torch.tensor([[0.0, -1.0], [1.0, 0.0]]), 0.0),  # a rotation: eigenvalues +-i
        (torch.zeros(4, 4), 0.0),
    ],
)
def test_eigen_copying_on_hand_built_matrices(matrix, score):
    assert eigen_copying(matrix) == pytest.approx(score, abs=1e-12)


def test_ov_circuit_equals_the_modules_own_path():
    """Each query head's column of the OV circuit is the logit change the attention module
    (grouped keys and values, its own head split) writes for a lone token, through the final
    LayerNorm's centring and gain, up to LN1's positive scale."""
    torch.manual_seed(0)
    cfg = GPTModelConfig(layers=1, heads=4, kv_heads=2, width=16, mlp=False, bias=False)
    model = GPT(cfg, 7, 8).eval()
    for p in model.parameters():  # GPT-2's 0.02 would leave logits too small to tell apart
        torch.nn.init.normal_(p, 0.0, 0.5)
    for ln in (model.blocks[0].ln1, model.ln_f):
        torch.nn.init.uniform_(ln.weight, 0.5, 2.0)
    embed = model.tokens.weight.detach()  # (V, D)
    scale = torch.sqrt(embed.var(-1, unbiased=False) + cfg.norm_eps)  # (V,) LN1's std
    for h in range(4):
        attn = copy.deepcopy(model.blocks[0].attn)
        with torch.no_grad():
            keep = torch.zeros(16)
            keep[h * 4 : (h + 1) * 4] = 1.0
            attn.out_proj.weight.mul_(keep)  # only head h writes
            context = attn(model.blocks[0].ln1(embed)[:, None], causal=True).context[:, 0]
            centred = context - context.mean(-1, keepdim=True)  # (V, D)
            logits = model.head(model.ln_f.weight * centred)  # (V in, V out)
        circuit = ov_circuit(model, 0, h).float()  # (V out, V in)
        want = logits * scale[:, None]
        assert float(want.abs().mean()) > 1.0
        torch.testing.assert_close(circuit.T, want, rtol=1e-4, atol=1e-4)


VOCAB, HALF = 9, 8  # token 0 begins each row; the others make the repeated half
T = 2 * HALF + 1
A, P, B = 0, 2 * VOCAB, 2 * VOCAB + 2 * T  # token, position and previous-token dimensions
BETA, COPY = 20.0, 10.0


def _induction_gpt() -> GPT:
    """A two-layer attention-only GPT set by hand. Each feature is a +1/-1 pair, so every
    residual is zero-mean and the LayerNorms only rescale. Layer 1: head 0 attends to the
    previous position and writes its token into B; head 1 attends to position 0 (a sink) and
    writes nothing. Layer 2: head 0 matches the current token against B (an induction head)
    and copies the attended token into the logits; head 1 is uniform."""
    width = 2 * VOCAB + 2 * T + 2 * VOCAB
    cfg = GPTModelConfig(layers=2, heads=2, width=width, mlp=False, bias=False)
    model = GPT(cfg, VOCAB, T).eval()
    dh, v2 = width // 2, 2 * VOCAB
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        for ln in (model.blocks[0].ln1, model.blocks[1].ln1, model.ln_f):
            ln.weight.fill_(1.0)
        for v in range(VOCAB):
            model.tokens.weight[v, A + v], model.tokens.weight[v, A + VOCAB + v] = 1.0, -1.0
        for t in range(T):
            model.positions.weight[t, P + t], model.positions.weight[t, P + T + t] = 1.0, -1.0
        first, second = model.blocks[0].attn, model.blocks[1].attn
        for i in range(T - 1):  # layer 1 head 0: query t looks for key t - 1
            first.q_proj.weight[i, P + i + 1] = BETA
        for i in range(T):
            first.k_proj.weight[i, P + i] = 1.0
        for i in range(v2):  # ... and writes that key's token into B
            first.v_proj.weight[i, A + i], first.out_proj.weight[B + i, i] = 1.0, 1.0
        first.q_proj.weight[dh, A : A + VOCAB] = BETA  # layer 1 head 1: every query on key 0
        first.k_proj.weight[dh, P] = 1.0
        for i in range(VOCAB):  # layer 2 head 0: this token against the keys' previous token
            second.q_proj.weight[i, A + i], second.k_proj.weight[i, B + i] = BETA, 1.0
        for i in range(v2):  # ... copying the attended token
            second.v_proj.weight[i, A + i], second.out_proj.weight[A + i, i] = 1.0, COPY
    return model


def test_scores_of_a_hand_made_induction_model():
    model = _induction_gpt()
    g = torch.Generator().manual_seed(0)
    halves = torch.stack([torch.randperm(VOCAB - 1, generator=g) + 1 for _ in range(3)])
    ids = torch.cat([torch.zeros(3, 1, dtype=torch.long), halves, halves], dim=1)  # (3, T)
    scores = head_scores(model, ids, batch_size=2)
    inverse = 1 / torch.arange(1, T + 1, dtype=torch.float)  # a uniform head's 1 / (t + 1)
    second_copy = inverse[HALF + 1 :].mean()  # the queries that repeat a token
    first_copy = inverse[4 : HALF + 1].sum() / (T - 4)  # layer 2 head 0 is uniform there
    expected = {
        "prefix_matching": [[0.0, 0.0], [1.0, second_copy]],
        "previous_token": [
            [1.0, 1 / (T - 1)],  # the sink head: query 1 on key 0, its previous
            [inverse[1 : HALF + 1].sum() / (T - 1), inverse[1:].mean()],
        ],
        "sink_share": [[0.0, 1.0], [first_copy, inverse[4:].mean()]],
        "copying": [[0.0, 0.0], [1.0, 0.0]],
    }
    for name, value in expected.items():
        got = getattr(scores, name).float()
        want = torch.tensor([[float(x) for x in row] for row in value])
        torch.testing.assert_close(got, want, rtol=0, atol=1e-5, msg=name)
    with torch.no_grad():  # and it predicts the repeat: the token after the earlier occurrence
        guess = model(ids).logits.argmax(-1)  # (3, T)
    assert torch.equal(guess[:, HALF + 1 : -1], ids[:, HALF + 2 :])
