"""SASRec (Kang & McAuley 2018) and the baselines against their definitions: causal (a later
item never changes an earlier position), left padding changes no real position, the loss
ignores padding, scores are dot products with the shared item table, popularity and
co-occurrence give hand-computed scores, and a tiny SASRec learns a repeated pattern."""

from __future__ import annotations

import pytest
import torch

from attnkit.apps.recommendation.baselines import (
    CoOccurrence,
    GRURec,
    GRURecConfig,
    Popularity,
)
from attnkit.apps.recommendation.model import SASRec, SASRecConfig, full_softmax_ce, sampled_bce

N_ITEMS = 12
SMALL = dict(max_len=8, d_model=16, n_blocks=2, heads=2, dropout=0.0)


def _models():
    torch.manual_seed(0)
    models = {
        "sasrec-authors": SASRec(SASRecConfig(**SMALL), N_ITEMS),
        "sasrec-paper": SASRec(SASRecConfig(**SMALL, block="paper"), N_ITEMS),
        "gru": GRURec(GRURecConfig(d_model=16, layers=2, dropout=0.0), N_ITEMS),
    }
    for name in ("sasrec-authors", "sasrec-paper"):  # as trained: padding slots' hidden != 0
        torch.nn.init.normal_(models[name].final_norm.bias)
    return [pytest.param(m.eval(), id=name) for name, m in models.items()]


def test_config_defaults_are_the_games_settings():
    cfg = SASRecConfig()
    assert (cfg.max_len, cfg.d_model, cfg.n_blocks, cfg.heads, cfg.dropout) == (50, 50, 2, 1, 0.5)
    with pytest.raises(ValueError, match="heads must divide d_model"):
        SASRecConfig(d_model=50, heads=3)


@pytest.mark.parametrize("model", _models())
def test_a_later_item_never_changes_an_earlier_position(model):
    seq = torch.tensor([[0, 0, 3, 5, 7, 2, 9, 4], [1, 2, 3, 4, 5, 6, 7, 8]])
    changed = seq.clone()
    changed[:, 5] = torch.tensor([11, 10])  # position 5 onwards may change
    before, after = model(seq), model(changed)
    torch.testing.assert_close(before[:, :5], after[:, :5])
    assert not torch.allclose(before[:, 5:], after[:, 5:])


@pytest.mark.parametrize("model", _models())
def test_left_padding_changes_no_real_position(model):
    short = torch.tensor([[3, 5, 7, 2]])
    padded = torch.tensor([[0, 0, 0, 3, 5, 7, 2], [0, 0, 0, 0, 0, 0, 9]])  # a second row too
    out_short, out_padded = model(short), model(padded)
    torch.testing.assert_close(out_padded[:1, 3:], out_short)
    assert out_padded.isfinite().all()


def test_sasrec_attention_is_causal_skips_padding_and_is_returned_per_block():
    torch.manual_seed(0)
    model = SASRec(SASRecConfig(**SMALL), N_ITEMS).eval()
    seq = torch.tensor([[0, 0, 3, 5, 7, 2]])
    out = model.encode(seq, need_weights=True)
    assert len(out.attentions) == 2 and out.attentions[0].shape == (1, 2, 6, 6)
    torch.testing.assert_close(out.hidden, model(seq))  # the readable path = the fused one
    for weights in out.attentions:
        assert weights.triu(1).abs().sum() == 0  # never a later item
        assert weights[..., :2].abs().sum() == 0  # never a padding key
        torch.testing.assert_close(weights[0, :, 2:].sum(-1), torch.ones(2, 4))
        assert weights[0, :, :2].abs().sum() == 0  # padding queries: zero rows, not NaN


def test_scores_are_dot_products_with_the_shared_item_table():
    torch.manual_seed(0)
    model = SASRec(SASRecConfig(**SMALL), N_ITEMS).eval()
    seq = torch.tensor([[0, 3, 5, 7], [1, 2, 3, 4]])
    hidden = model(seq)  # (B, L, d)
    table = model.item_embedding.weight  # the input table is the output table
    torch.testing.assert_close(model.score(hidden), hidden @ table.T)
    items = torch.tensor([4, 9, 1])
    torch.testing.assert_close(model.score(hidden, items), hidden @ table[items].T)
    per_row = torch.tensor([[2, 6], [7, 1]])
    expected = torch.stack([hidden[b, -1] @ table[per_row[b]].T for b in range(2)])
    torch.testing.assert_close(model.predict(seq, per_row), expected)
    assert model.item_embedding.weight[0].abs().sum() == 0  # padding id 0


def test_the_loss_is_eq_7_and_ignores_padding():
    pos_logits = torch.tensor([[9.0, 0.5, -1.0]])
    neg_logits = torch.tensor([[-9.0, 0.2, 3.0]])
    targets = torch.tensor([[False, True, True]])
    sig = torch.sigmoid
    by_hand = [-(sig(pos_logits[0, t]).log() + (1 - sig(neg_logits[0, t])).log()) for t in (1, 2)]
    torch.testing.assert_close(sampled_bce(pos_logits, neg_logits, targets), sum(by_hand) / 2)


@pytest.mark.parametrize("model", _models())
def test_the_model_loss_ignores_padding_positions(model):
    seq = torch.tensor([[0, 0, 3, 5, 7, 2]])
    pos = torch.tensor([[0, 0, 5, 7, 2, 9]])  # no target at the padding slots
    neg = torch.tensor([[4, 11, 1, 6, 8, 10]])
    other = neg.clone()
    other[0, :2] = torch.tensor([1, 3])  # other negatives at the padding slots change nothing
    torch.testing.assert_close(model.loss(seq, pos, neg), model.loss(seq, pos, other))
    other[0, 2] = 4  # a real slot's negative does
    assert not torch.allclose(model.loss(seq, pos, neg), model.loss(seq, pos, other))


def test_the_full_softmax_loss_is_cross_entropy_over_every_item_but_padding():
    torch.manual_seed(0)
    hidden, table = torch.randn(1, 3, 4), torch.randn(6, 4)  # 5 items + the padding row
    pos = torch.tensor([[0, 4, 1]])  # no target at the first slot
    by_hand = []
    for t in (1, 2):
        logits = [float(hidden[0, t] @ table[i]) for i in range(1, 6)]  # items 1..5 only
        log_z = torch.logsumexp(torch.tensor(logits), 0)
        by_hand.append(log_z - logits[int(pos[0, t]) - 1])
    torch.testing.assert_close(full_softmax_ce(hidden, table, pos), sum(by_hand) / 2)


@pytest.mark.parametrize("model", _models())
def test_the_ce_objective_ignores_negatives_and_padding(model):
    seq = torch.tensor([[0, 0, 3, 5, 7, 2]])
    pos = torch.tensor([[0, 0, 5, 7, 2, 9]])
    neg = torch.tensor([[4, 11, 1, 6, 8, 10]])
    ce = model.loss(seq, pos, neg, "ce")
    torch.testing.assert_close(ce, model.loss(seq, pos, neg.flip(1), "ce"))
    assert not torch.allclose(ce, model.loss(seq, pos, neg))  # not the BCE
    hidden = model(seq)
    torch.testing.assert_close(ce, full_softmax_ce(hidden, model.item_embedding.weight, pos))


HISTORY = [[1, 2, 3], [2, 3, 1], [3, 2, 2]]  # counts: 1:2, 2:4, 3:3, 4:0; total 9
# transitions: 1->2, 2->3 (twice), 2->2, 3->1, 3->2


def test_popularity_counts_the_training_items():
    model = Popularity().fit(HISTORY, n_items=4)
    scores = model.predict(torch.tensor([[0, 1], [2, 3]]))
    torch.testing.assert_close(scores, torch.tensor([[0, 2, 4, 3, 0]] * 2, dtype=torch.float64))
    torch.testing.assert_close(
        model.predict(torch.tensor([[1]]), torch.tensor([4, 2])),
        torch.tensor([[0.0, 4.0]], dtype=torch.float64),
    )


def test_co_occurrence_scores_by_hand():
    seq = torch.tensor([[0, 1, 2], [1, 2, 3]])  # last items 2 and 3
    plain = CoOccurrence(window=1, backoff=False).fit(HISTORY, n_items=4)
    expected = torch.tensor([[0, 0, 1, 2, 0], [0, 1, 1, 0, 0]], dtype=torch.float64)
    torch.testing.assert_close(plain.predict(seq), expected)
    two = CoOccurrence(window=2, backoff=False).fit(HISTORY, n_items=4)
    # row 0: C[1,.] + C[2,.]; row 1: C[2,.] + C[3,.]
    expected = torch.tensor([[0, 0, 2, 2, 0], [0, 1, 2, 2, 0]], dtype=torch.float64)
    torch.testing.assert_close(two.predict(seq), expected)
    backoff = CoOccurrence(window=1).fit(HISTORY, n_items=4)
    prior = torch.tensor([0, 2, 4, 3, 0], dtype=torch.float64) / 10
    torch.testing.assert_close(backoff.predict(seq), plain.predict(seq) + prior)
    # row 1 (after 3): items 1 and 2 tie on one transition; popularity puts 2 first
    assert backoff.predict(seq, torch.tensor([1, 2]))[1].argmax() == 1


def test_a_tiny_sasrec_learns_a_repeated_pattern():
    torch.manual_seed(0)
    cycle = [1, 2, 3, 4, 5, 6]
    cfg = SASRecConfig(max_len=6, d_model=16, n_blocks=1, heads=1, dropout=0.0)
    model = SASRec(cfg, n_items=10)
    stream = cycle * 4
    rows = torch.tensor([stream[s : s + 7] for s in range(6)])  # every phase of the cycle
    seq, pos = rows[:, :-1], rows[:, 1:]  # (6, 6) each
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(40):
        neg = torch.randint(1, 11, pos.shape)
        neg = torch.where(neg == pos, neg % 10 + 1, neg)  # never the positive
        loss = model.loss(seq, pos, neg)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]
    model.eval()
    with torch.no_grad():
        scores = model.predict(seq, torch.arange(1, 11))  # (6, 10) over items 1 .. 10
    assert torch.equal(scores.argmax(-1) + 1, pos[:, -1])
