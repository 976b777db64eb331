"""Learning-rate schedules against their formulas; checkpoints round-trip without pickles."""

import math

import pytest
import torch
from safetensors.torch import save_file

from attnkit.apps.translation.models.recurrent import RNNSeq2Seq
from attnkit.engine.checkpoint import (
    average_checkpoints,
    load_model,
    load_trainer,
    save_model,
    save_trainer,
)
from attnkit.engine.schedules import build_scheduler, inverse_sqrt, noam


def test_noam_is_vaswani_eq_3_and_peaks_at_warmup():
    d, warmup = 512, 4000
    for step in (1, 100, 4000, 10000):
        expected = d**-0.5 * min(step**-0.5, step * warmup**-1.5)
        assert noam(step, d_model=d, warmup=warmup) == pytest.approx(expected)
    values = [noam(s, d_model=d, warmup=warmup) for s in range(1, 20000, 50)]
    assert values.index(max(values)) == round(4000 / 50)


def test_inverse_sqrt_warms_up_linearly_then_decays():
    assert inverse_sqrt(50, warmup=100) == pytest.approx(0.5)
    assert inverse_sqrt(100, warmup=100) == pytest.approx(1.0)
    assert inverse_sqrt(400, warmup=100) == pytest.approx(0.5)


def test_schedulers_drive_the_optimizer():
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=2.0)
    sched = build_scheduler(opt, "noam", warmup=10, d_model=64, factor=0.5, patience=1)
    lrs = []
    for _ in range(30):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert max(lrs) == pytest.approx(2.0)  # the configured rate is the peak, at step = warmup
    assert lrs.index(max(lrs)) == 9
    opt = torch.optim.SGD([param], lr=1.0)
    plateau = build_scheduler(opt, "plateau", warmup=1, d_model=1, factor=0.5, patience=0)
    for loss in (1.0, 1.0, 1.0):
        plateau.step(loss)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.25)  # halved on each flat epoch
    assert build_scheduler(opt, "constant", warmup=1, d_model=1, factor=1, patience=1) is None


def test_warmup_cosine_with_a_floor_is_nanogpts_get_lr():
    """nanoGPT's ``get_lr`` (train.py): after warm-up, ``min_lr + coeff * (lr - min_lr)`` with
    ``coeff = 0.5 (1 + cos(pi * decay_ratio))``; its Shakespeare recipe: lr 1e-3, min_lr 1e-4."""
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=1e-3)
    sched = build_scheduler(
        opt, "warmup_cosine", warmup=100, d_model=1, factor=1, patience=1, total=2000, floor=0.1
    )
    for step in range(2000):
        if step >= 100:
            ratio = (step - 100) / (2000 - 100)
            expected = 1e-4 + 0.5 * (1 + math.cos(math.pi * ratio)) * (1e-3 - 1e-4)
            assert opt.param_groups[0]["lr"] == pytest.approx(expected), step
        opt.step()
        sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(1e-4, rel=1e-3)


def _model():
    return RNNSeq2Seq(
        30, 30, embed_dim=8, hidden_dim=8, attention="luong-general", tie_embeddings=True
    )


def test_model_round_trip_with_tied_weights(tmp_path):
    torch.manual_seed(0)
    a, b = _model(), _model()
    save_model(a, tmp_path / "m.safetensors")
    assert not list(tmp_path.glob("*.tmp"))  # written atomically
    load_model(b, tmp_path / "m.safetensors")
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert b.output.weight is b.embed.weight  # still tied after loading
    with pytest.raises(FileNotFoundError, match="no model checkpoint"):
        load_model(b, tmp_path / "missing.safetensors")
    save_file({"bogus": torch.zeros(1)}, str(tmp_path / "bad.safetensors"))
    with pytest.raises(KeyError, match="unexpected parameters"):
        load_model(b, tmp_path / "bad.safetensors")


def test_trainer_state_round_trip(tmp_path):
    torch.manual_seed(0)
    model = _model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = build_scheduler(opt, "inverse_sqrt", warmup=5, d_model=8, factor=0.5, patience=1)
    for _ in range(3):
        model(
            torch.randint(4, 30, (2, 5)),
            torch.ones(2, 5, dtype=torch.bool),
            torch.randint(4, 30, (2, 4)),
        ).logits.sum().backward()
        opt.step()
        sched.step()
    save_trainer(tmp_path, optimizer=opt, scheduler=sched, step=3, epoch=1, extra={"k": 1})
    expected_rng = torch.rand(3)
    opt2 = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched2 = build_scheduler(opt2, "inverse_sqrt", warmup=5, d_model=8, factor=0.5, patience=1)
    state = load_trainer(tmp_path, optimizer=opt2, scheduler=sched2)
    assert state == {"step": 3, "epoch": 1, "extra": {"k": 1}}
    assert torch.equal(torch.rand(3), expected_rng)  # the RNG continues where it was saved
    assert sched2.last_epoch == sched.last_epoch
    for group_a, group_b in zip(opt.state.values(), opt2.state.values(), strict=True):
        torch.testing.assert_close(group_a["exp_avg"], group_b["exp_avg"])
        assert float(group_a["step"]) == float(group_b["step"])


def test_average_checkpoints(tmp_path):
    for i, value in enumerate((1.0, 2.0, 6.0)):
        save_file({"w": torch.full((2,), value)}, str(tmp_path / f"{i}.safetensors"))
    mean = average_checkpoints([tmp_path / f"{i}.safetensors" for i in range(3)])
    torch.testing.assert_close(mean["w"], torch.full((2,), 3.0))
    with pytest.raises(ValueError, match="no checkpoints"):
        average_checkpoints([])
    assert math.isclose(3.0, float(mean["w"][0]))


def test_decay_matrices_only_spares_biases_and_norm_gains():
    """GPT-2's and nanoGPT's rule (nanoGPT's configure_optimizers: decay on parameters of
    two or more dimensions): with lr 1 and no gradient, AdamW shrinks only the matrices."""
    from attnkit.engine.settings import TrainSettings
    from attnkit.engine.setup import build_optimiser

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
    for decay_all in (False, True):
        torch.manual_seed(0)
        for p in model.parameters():
            p.data.fill_(1.0)
            p.grad = torch.zeros_like(p)
        t = TrainSettings(optimiser="adamw", learning_rate=0.5, weight_decay=0.1)
        t.decay_matrices_only = not decay_all
        build_optimiser(model, t).step()
        linear, norm = model[0], model[1]
        assert torch.allclose(linear.weight, torch.full_like(linear.weight, 0.95))
        kept = 0.95 if decay_all else 1.0
        for p in (linear.bias, norm.weight, norm.bias):
            assert torch.allclose(p, torch.full_like(p, kept))
