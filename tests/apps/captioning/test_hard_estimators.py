"""Variance reduction for hard attention (attnkit.apps.captioning.losses / context): the
leave-one-out, learned and moving baselines, the Gumbel-softmax relaxation, its annealed
temperature, and short runs of each estimator through the engine."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from tests.apps.captioning.test_caption_engine_resume import tiny_hard

from attnkit.apps.captioning.config import CaptioningConfig, load_experiment
from attnkit.apps.captioning.context import context
from attnkit.apps.captioning.losses import baseline_values
from attnkit.apps.captioning.model import Captioner, CaptionerConfig
from attnkit.apps.captioning.training import CaptioningTask
from attnkit.attention.normalisers import reinforce_loss
from attnkit.engine.trainer import fit


def test_leave_one_out_is_the_mean_of_the_other_samples():
    reward = torch.tensor([1.0, 2.0, 6.0, -1.0, 0.0, 4.0])  # two images, three samples each
    b = baseline_values(reward, "loo", 0.0, 3)
    torch.testing.assert_close(b, torch.tensor([4.0, 3.5, 1.5, 2.0, 1.5, -0.5]))
    torch.testing.assert_close(baseline_values(reward, "moving", 0.7, 1), torch.full((6,), 0.7))
    torch.testing.assert_close(baseline_values(reward, "none", 0.7, 1), torch.zeros(6))
    value = torch.arange(6.0, requires_grad=True)
    learned = baseline_values(reward, "learned", 0.0, 1, value)
    assert not learned.requires_grad and torch.equal(learned, value.detach())
    with pytest.raises(ValueError, match="groups of >= 2"):
        baseline_values(reward, "loo", 0.0, 4)
    with pytest.raises(ValueError, match="value head"):
        baseline_values(reward, "learned", 0.0, 1)


def _estimates(kind: str, draws: int, k: int = 4):
    """REINFORCE gradients of E_{s~softmax(logits)}[r(s)] from ``draws`` groups of ``k``."""
    torch.manual_seed(0)
    logits = torch.tensor([0.5, -0.3, 1.0, 0.0], requires_grad=True)
    r = torch.tensor([3.0, 1.0, 2.5, 5.0])  # a reward per location, with a large mean
    grads = []
    for _ in range(draws):
        s = torch.multinomial(torch.softmax(logits, -1).detach(), k, replacement=True)
        reward = r[s]
        log_p = torch.log_softmax(logits, -1)[s]
        b = baseline_values(reward, kind, 0.0, k)
        (g,) = torch.autograd.grad(-reinforce_loss(log_p, reward, b), logits)
        grads.append(g)
    p = torch.softmax(logits, -1).detach()
    return torch.stack(grads), p * (r - (p * r).sum())  # estimates (draws, L), exact gradient


def test_the_leave_one_out_estimator_is_unbiased_and_varies_less():
    loo, exact = _estimates("loo", 3000)
    plain, _ = _estimates("none", 3000)
    torch.testing.assert_close(loo.mean(0), exact, atol=0.03, rtol=0.0)
    torch.testing.assert_close(plain.mean(0), exact, atol=0.12, rtol=0.0)
    assert loo.var(0).sum() < 0.25 * plain.var(0).sum()


def _tiny_model(attention: str) -> Captioner:
    torch.manual_seed(1)
    cfg = CaptionerConfig(
        attention=attention, canvas=16, grid=4, d_feature=8, d_embed=8, d_hidden=16, d_attention=8
    )
    return Captioner(cfg, vocab_size=12)


def test_gumbel_context_is_one_annotation_with_a_gradient_to_the_scores():
    model = _tiny_model("gumbel")
    annotations = torch.randn(3, 16, 8)
    prepared = model.attention.prepare_key(annotations)
    h = torch.randn(3, 16)
    z, alpha, beta, log_prob, _ = context(model, h, annotations, prepared, sample=True, tau=0.5)
    chosen = z / beta.unsqueeze(-1)  # (B, D): exactly one annotation vector per image
    hits = (chosen.unsqueeze(1) - annotations).abs().sum(-1).lt(1e-5).sum(-1)
    assert log_prob is None and hits.tolist() == [1, 1, 1]
    z.sum().backward()
    assert model.attention.score.v.weight.grad.abs().sum() > 0  # unlike a sample's context
    zd, *_ = context(model, h, annotations, prepared, sample=False)  # decoding: the argmax
    best = alpha.argmax(-1)
    torch.testing.assert_close(zd / beta.unsqueeze(-1), annotations[torch.arange(3), best])


def test_gumbel_temperature_anneals_to_its_floor():
    cfg = tiny_hard()
    cfg.train = dataclasses.replace(cfg.train, tau_start=2.0, tau_min=0.5, tau_decay=0.1)
    task = CaptioningTask(cfg)
    assert task.temperature() == 2.0
    task.updates = 10
    assert task.temperature() == pytest.approx(2.0 * 2.718281828**-1.0)
    task.updates = 1000
    assert task.temperature() == 0.5


def test_config_refuses_leave_one_out_with_one_sample(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("task: captioning\nmodel: {attention: hard}\ntrain: {baseline: loo}\n")
    with pytest.raises(Exception, match="c.yaml.*samples must be >= 1 \\(>= 2 for the leave"):
        load_experiment(path)


@pytest.mark.parametrize(
    "attention, train_fields",
    [("hard", {"baseline": "loo", "samples": 3}), ("hard", {"baseline": "learned"}),
     ("gumbel", {"tau_decay": 0.05})],
)  # fmt: skip
def test_each_estimator_trains_through_the_engine(tmp_path, attention, train_fields):
    cfg: CaptioningConfig = tiny_hard()
    cfg.model = dataclasses.replace(cfg.model, attention=attention, hard_expectation=0.0)
    cfg.train = dataclasses.replace(cfg.train, epochs=2, **train_fields)
    result = fit(CaptioningTask(cfg), tmp_path / "run")
    rows = [r for r in result.history if "train_nll" in r]
    assert rows and all(torch.isfinite(torch.tensor(r["train_nll"])) for r in rows)
    if train_fields.get("baseline") == "learned":
        assert all("train_baseline_error" in r for r in rows)


def test_the_hard_attention_benchmark_gives_each_variant_a_curve(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "benchmarks" / "hard_attention.py"
    out = tmp_path / "h.json"
    command = [sys.executable, str(script), "--updates", "20", "--every", "10", "--only", "0,1"]
    command += ["--runs", str(tmp_path / "runs"), "--json", str(out), "--picture", ""]
    printed = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rows = json.loads(out.read_text())["rows"]
    assert [len(r["curve"]) for r in rows[:2]] == [2, 2]
    assert [r["curve"][-1]["step"] for r in rows[:2]] == [20, 20]
    assert "soft's wall-clock" in rows[2]["name"]  # the paper's hard model, timed like soft
    assert printed.count("| hard") == 2
