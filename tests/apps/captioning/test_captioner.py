"""The captioner's shapes, the doubly stochastic penalty, hard attention and REINFORCE."""

from pathlib import Path

import numpy as np
import pytest
import torch

from attnkit.apps.captioning.config import load_experiment
from attnkit.apps.captioning.context import context
from attnkit.apps.captioning.losses import caption_loss, doubly_stochastic_penalty
from attnkit.apps.captioning.model import Captioner, CaptionerConfig, DecoderOutput
from attnkit.attention.normalisers import sample
from attnkit.config import ConfigError

SMALL = dict(canvas=16, grid=4, d_feature=8, d_embed=6, d_hidden=10, d_attention=7)


def model_for(mode, vocab=9):
    return Captioner(CaptionerConfig(attention=mode, **SMALL), vocab, pad_id=0)


@pytest.mark.parametrize("mode", ["soft", "hard", "none"])
def test_shapes_and_distributions(mode):
    model = model_for(mode)
    images, tokens = torch.rand(3, 3, 16, 16), torch.randint(3, 9, (3, 6))
    for training in (True, False):
        model.train(training)
        out = model(images, tokens)
        assert out.logits.shape == (3, 5, 9) and out.alpha.shape == (3, 5, 16)
        assert out.beta.shape == (3, 5)
        if mode == "none":
            assert not out.alpha.any() and out.log_prob is None
        else:
            assert torch.allclose(out.alpha.sum(-1), torch.ones(3, 5), atol=1e-5)
            assert ((out.beta > 0) & (out.beta < 1)).all()
            assert (out.log_prob is not None) == (mode == "hard" and training)
    dec = model.greedy(images, bos_id=1, eos_id=2, max_len=7)
    assert dec.tokens.shape[0] == 3 and dec.tokens.shape[1] <= 7
    assert dec.alpha.shape == (*dec.tokens.shape, 16)


def test_no_attention_model_has_no_attention_parameters():
    names = [n for n, _ in model_for("none").named_parameters()]
    assert not any(n.startswith(("attention", "f_beta", "L_z")) for n in names)
    assert any(n.startswith("attention") for n, _ in model_for("soft").named_parameters())


def test_hard_attention_context_is_the_sampled_annotation():
    """z_t = beta_t a_{s_t} with log p(s_t) = log alpha_{t, s_t} (Xu et al. eqs. (8)-(9))."""
    model = model_for("hard").train()
    images = torch.rand(4, 3, 16, 16)
    annotations, prepared, (h, _) = model._prepare(images)
    z, alpha, beta, log_prob, _ = context(model, h, annotations, prepared, sample=True)
    for b in range(4):
        diffs = (annotations[b] * beta[b] - z[b]).abs().sum(-1)  # (L,)
        s = int(diffs.argmin())
        assert diffs[s] < 1e-5
        assert log_prob[b].item() == pytest.approx(alpha[b, s].log().item(), abs=1e-5)
    # decoding (not sampling) takes the most likely location
    z, alpha, beta, log_prob, _ = context(model, h, annotations, prepared, sample=False)
    best = alpha.argmax(-1)
    assert torch.allclose(z, beta[:, None] * annotations[torch.arange(4), best], atol=1e-6)


def test_hard_expectation_takes_the_soft_context_and_leaves_reinforce_alone():
    """Xu et al. §4.1: with probability p an image uses sum_i alpha_ti a_i, not a sample."""
    model = model_for("hard").train()
    images = torch.rand(4, 3, 16, 16)
    annotations, prepared, (h, _) = model._prepare(images)
    expect = torch.tensor([True, False, True, False])
    z, alpha, beta, log_prob, _ = context(model, h, annotations, prepared, True, expect)
    mean = beta[:, None] * torch.einsum("bl,bld->bd", alpha, annotations)
    assert torch.allclose(z[expect], mean[expect], atol=1e-6)
    assert (log_prob[expect] == 0).all() and (log_prob[~expect] < 0).all()
    for b in (1, 3):  # sampled rows: one annotation vector
        assert (annotations[b] * beta[b] - z[b]).abs().sum(-1).min() < 1e-5
    # forward draws the mask once per image: p = 1 samples nothing, p = 0 everything
    tokens = torch.randint(3, 9, (4, 6))
    for p, n_sampled in ((1.0, 0), (0.0, None)):
        model.cfg.hard_expectation = p
        out = model(images, tokens)
        if n_sampled is None:
            assert out.sampled is None and (out.log_prob < 0).all()
        else:
            assert int(out.sampled.sum()) == n_sampled and (out.log_prob == 0).all()
            loss, stats = caption_loss(out, tokens[:, 1:], pad_id=0, reinforce=1.0)
            assert "reward" not in stats  # the baseline sees only sampled captions
    with pytest.raises(ValueError, match=r"^hard_expectation must be in \[0, 1\], got 1.5$"):
        CaptionerConfig(attention="hard", hard_expectation=1.5, **SMALL)


def test_doubly_stochastic_penalty_by_hand():
    rng = np.random.default_rng(0)
    alpha = rng.dirichlet(np.ones(5), size=(2, 3))  # (B=2, T=3, L=5)
    mask = np.array([[1, 1, 1], [1, 1, 0]], bool)
    expected = []
    for b in range(2):
        total = 0.0
        for i in range(5):
            attended = sum(alpha[b, t, i] for t in range(3) if mask[b, t])
            total += (1 - attended) ** 2
        expected.append(total)
    got = doubly_stochastic_penalty(torch.tensor(alpha), torch.tensor(mask))
    assert np.allclose(got.numpy(), expected)


def test_reinforce_gradient_matches_the_exact_gradient_of_the_expected_reward():
    """Toy case: two locations; the caption is likely (reward log 0.9) after location 0 and
    unlikely (log 0.1) after location 1. The REINFORCE estimate of the gradient of
    E_s[log p(y|s)] through caption_loss must match p0 p1 (r0 - r1) in sign and size."""
    theta = torch.tensor([0.3, -0.2], requires_grad=True)
    n = 40000
    generator = torch.Generator().manual_seed(0)
    weights, log_prob = sample(theta.expand(n, 2), generator=generator)  # (N, 2), (N,)
    chosen = weights.argmax(-1)
    p_word = torch.where(chosen == 0, 0.9, 0.1)  # p(y | s) of the one-word caption
    logits = torch.stack([p_word.log(), (1 - p_word).log()], -1)[:, None, :]  # (N, 1, V=2)
    out = DecoderOutput(
        logits, weights[:, None], torch.ones(n, 1), log_prob[:, None], torch.zeros(n, 1)
    )
    baseline = 0.5 * (np.log(0.9) + np.log(0.1))
    loss, stats = caption_loss(
        out, torch.zeros(n, 1, dtype=torch.long), pad_id=-1, baseline=baseline
    )
    loss.backward()
    p = torch.softmax(theta.detach(), -1)
    exact = p[0] * p[1] * (np.log(0.9) - np.log(0.1))  # d E[r] / d theta_0
    assert theta.grad[0] < 0  # descending the loss raises the score of the better location
    assert theta.grad[0].item() == pytest.approx(-exact.item(), rel=0.1)
    assert theta.grad.sum().item() == pytest.approx(0.0, abs=1e-5)  # softmax shift invariance


def test_entropy_bonus_pushes_towards_uniform():
    theta = torch.tensor([1.0, 0.0], requires_grad=True)
    alpha = torch.softmax(theta, -1)
    entropy = -(alpha * alpha.log()).sum()
    out = DecoderOutput(
        torch.zeros(1, 1, 2),
        alpha[None, None],
        torch.ones(1, 1),
        torch.zeros(1, 1, requires_grad=True),
        entropy.reshape(1, 1),
    )
    loss, _ = caption_loss(
        out, torch.zeros(1, 1, dtype=torch.long), pad_id=-1, reinforce=0.0, entropy=1.0
    )
    loss.backward()
    assert theta.grad[0] > 0 and theta.grad[1] < 0


def test_configs_are_checked(tmp_path):
    with pytest.raises(ValueError, match="canvas 30 must be grid 8 times a power of two"):
        CaptionerConfig(canvas=30, grid=8)
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: captioning\nmodel:\n  attention: soft\n  gating: true\n")
    with pytest.raises(ConfigError, match=r"bad.yaml, line 4: unknown key 'gating'"):
        load_experiment(bad)
    bad.write_text("task: captioning\nmodel:\n  attention: glimpse\n")
    with pytest.raises(ConfigError, match="line 3.*'glimpse'; choose one of 'soft', 'hard'"):
        load_experiment(bad)
    bad.write_text("task: captioning\ndata:\n  canvas: 48\n")
    with pytest.raises(ConfigError, match="model.canvas 32 differs from data.canvas 48"):
        load_experiment(bad)
    # the train section is the engine's TrainSettings plus captioning's own fields, each checked
    for key, value, message in [
        ("updates_per_epoch", 0, "updates_per_epoch must be at least 1, got 0"),
        ("baseline_decay", 1.5, r"baseline_decay must be in \[0, 1\), got 1.5"),
        ("entropy", -0.1, "entropy must be at least 0, got -0.1"),
        ("epochs", 0, "epochs must be at least 1, got 0"),
        ("schedule", "plateau", "schedule 'plateau' needs a validation loss"),
    ]:
        bad.write_text(f"task: captioning\ntrain:\n  batch_size: 4\n  {key}: {value}\n")
        with pytest.raises(ConfigError, match=f"bad.yaml, line 4: (train.)?{message}"):
            load_experiment(bad)
    bad.write_text("task: captioning\ntrain:\n  steps: 900\n")
    with pytest.raises(ConfigError, match="line 3: unknown key 'steps' in section 'train'"):
        load_experiment(bad)
    bad.write_text("task: captioning\ntrain:\n  updates_per_epoch: 7\n")
    cfg = load_experiment(bad, ["train.epochs=2"])  # as --set train.epochs=2
    assert cfg.train.epochs == 2 and cfg.train.total_updates == 2 * cfg.train.updates_per_epoch


ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("scenes-*.yaml")), ids=str)
def test_shipped_scene_configs_load(path):
    cfg = load_experiment(path)
    assert cfg.name == path.stem and cfg.task == "captioning"
    assert path.stem.removeprefix("scenes-").startswith(cfg.model.attention)
